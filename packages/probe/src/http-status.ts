import type { IncomingHttpHeaders } from 'node:http';
import { ProbeFailure } from './probe-failure.ts';
import { headerValue } from './probe-http.ts';

const MAX_METADATA_URL = 2048;

/** The RFC 9728 `resource_metadata` URL of a WWW-Authenticate challenge, if it is a usable one. */
export function resourceMetadataUrl(wwwAuthenticate: string | undefined): string | null {
  if (!wwwAuthenticate) return null;
  const match = /resource_metadata\s*=\s*(?:"([^"]*)"|([^\s,]+))/i.exec(wwwAuthenticate);
  const raw = match?.[1] ?? match?.[2];
  if (!raw || raw.length > MAX_METADATA_URL) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/**
 * The failure a non-2xx answer stands for. 401 is an auth challenge by definition; 403 only when
 * it carries WWW-Authenticate (a bare 403 is more often a WAF page than an auth flow).
 */
export function failureForStatus(status: number, headers: IncomingHttpHeaders): ProbeFailure {
  const challenge = headerValue(headers, 'www-authenticate');
  if (status === 401 || (status === 403 && challenge !== undefined)) {
    return new ProbeFailure(
      'auth',
      `HTTP ${status}: authorization required`,
      status,
      resourceMetadataUrl(challenge),
    );
  }
  if (status >= 500) return new ProbeFailure('http_5xx', `HTTP ${status}`, status);
  if (status >= 400) return new ProbeFailure('http_4xx', `HTTP ${status}`, status);
  return new ProbeFailure('invalid_response', `unexpected HTTP ${status}`, status);
}
