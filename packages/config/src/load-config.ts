import path from 'node:path';
import { type Env, envSchema } from './env.schema.ts';

export interface Config extends Env {
  /** 'embedded' when DATABASE_URL is unset; 'distributed' when both DATABASE_URL and REDIS_URL are set. */
  mode: 'embedded' | 'distributed';
  /** DATA_DIR made absolute. */
  dataDir: string;
  publicBaseUrl: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment; throws ConfigError listing one line per bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Treat empty strings as unset, as docker-compose and shells commonly pass `VAR=`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.') || '(environment)';
      const value = cleaned[name];
      const shown =
        value === undefined
          ? ''
          : ` (got ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)})`;
      return `${name}: ${issue.message}${shown}`;
    });
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  const localHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? 'localhost' : e.HOST;
  return {
    ...e,
    mode: e.DATABASE_URL ? 'distributed' : 'embedded',
    dataDir: path.resolve(e.DATA_DIR),
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${localHost}:${e.PORT}`).replace(/\/+$/, ''),
  };
}

/** For process entry points: load or print the problems and exit(1) before anything listens. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
