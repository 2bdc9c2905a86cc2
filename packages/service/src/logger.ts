import { pino } from 'pino';

export type AppLogger = pino.Logger;

/** pino JSON logs; secrets that may pass through request logs are redacted. */
export function createLogger(level: string, name = 'observatory'): AppLogger {
  return pino({
    name,
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.api_key'],
      censor: '[redacted]',
    },
  });
}
