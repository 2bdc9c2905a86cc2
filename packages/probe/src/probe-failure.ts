import type { ProbeErrorType } from '@observatory/core';

export const MAX_ERROR_MESSAGE = 300;

export function boundMessage(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return oneLine.length <= MAX_ERROR_MESSAGE ? oneLine : `${oneLine.slice(0, MAX_ERROR_MESSAGE - 1)}…`;
}

/** A probe step that ended the way a server can make it end; carries its classification. */
export class ProbeFailure extends Error {
  constructor(
    readonly errorType: ProbeErrorType,
    message: string,
    readonly httpStatus: number | null = null,
    readonly authResourceMetadata: string | null = null,
  ) {
    super(boundMessage(message));
  }
}

/** What in-flight requests fail with when the probe's deadline passes. */
export class ProbeDeadlineError extends Error {}

const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'ENODATA',
  'ESERVFAIL',
  'ENONAME',
]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ABORT_ERR',
]);
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EPIPE',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function isTlsError(code: string): boolean {
  return (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    code.includes('CERT') ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'EPROTO'
  );
}

/** Maps anything thrown during a probe to a ProbeFailure. */
export function toProbeFailure(err: unknown, deadlinePassed: boolean): ProbeFailure {
  if (err instanceof ProbeFailure) return err;
  if (deadlinePassed || err instanceof ProbeDeadlineError)
    return new ProbeFailure('timeout', 'probe deadline exceeded');
  const e = err as NodeJS.ErrnoException & { cause?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = e instanceof Error ? e.message : String(err);
  if (code === 'ERR_SSRF_BLOCKED') return new ProbeFailure('ssrf_blocked', `refused: ${message}`);
  if (DNS_CODES.has(code)) return new ProbeFailure('dns', message);
  if (TIMEOUT_CODES.has(code) || e?.name === 'AbortError') return new ProbeFailure('timeout', message);
  if (CONNECT_CODES.has(code)) return new ProbeFailure('connect', message);
  if (code && isTlsError(code)) return new ProbeFailure('tls', message);
  return new ProbeFailure('other', message || 'unknown error');
}
