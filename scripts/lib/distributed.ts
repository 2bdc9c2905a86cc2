import type { CliProcess } from '@observatory/cli-app/test/cli-process.ts';

/**
 * The environment of distributed `observatory` processes (api, scheduler, workers) as the
 * benchmarks, the soak and the fault tests run them: loopback only, an OS-chosen API port,
 * private targets allowed (the probe fleet is a testkit on 127.0.0.1), and every fleet server
 * sharing one host:port, so the per-host cap (default 4) must not serialize them. `extra`
 * adds or overrides settings.
 */
export function distributedEnv(
  base: {
    databaseUrl: string;
    redisUrl: string;
    queuePrefix: string;
    dataDir: string;
    probeIntervalS: number;
  },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: base.databaseUrl,
    REDIS_URL: base.redisUrl,
    QUEUE_PREFIX: base.queuePrefix,
    DATA_DIR: base.dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    PROBE_ALLOW_PRIVATE_NETWORKS: 'true',
    PROBE_INTERVAL_S: String(base.probeIntervalS),
    PROBE_PER_HOST_CONCURRENCY: '100',
    ...extra,
  };
}

/** Waits for `observatory api` to listen (on PORT=0, a port the OS chose) and returns its base URL. */
export async function apiUrlOf(api: CliProcess, timeoutMs = 30_000): Promise<string> {
  const [, port] = await api.waitFor(/listening on http:\/\/[^:]+:(\d+)/, timeoutMs);
  return `http://127.0.0.1:${port}`;
}

/** A scheduler tick's debug line (pino JSON, LOG_LEVEL=debug): how many due probes it dispatched. */
export interface DispatchedLine {
  time: number;
  claimed: number;
  maxLagSeconds: number;
}

/** The "probes dispatched" lines of a scheduler's output: what it dispatched, to compare with what was stored. */
export function dispatchedLines(output: string): DispatchedLine[] {
  return output
    .split('\n')
    .filter((line) => line.includes('"probes dispatched"'))
    .map((line) => JSON.parse(line) as DispatchedLine);
}

/** SIGTERM, then waits for the exit (SIGKILL after `graceMs`, for a process that hangs). */
export async function stopCli(cli: CliProcess, graceMs: number): Promise<Awaited<CliProcess['exited']>> {
  if (cli.child.exitCode !== null || cli.child.signalCode !== null) return cli.exited;
  cli.child.kill('SIGTERM');
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), graceMs);
  try {
    return await cli.exited;
  } finally {
    clearTimeout(timer);
  }
}
