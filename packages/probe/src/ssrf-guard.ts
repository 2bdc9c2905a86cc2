import dns from 'node:dns';
import { isIP, type LookupFunction as NetLookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { type AddressPolicy, blockedAddressReason, parseCidrs } from './address-policy.ts';
import type { LookupFunction } from './probe-options.ts';

/**
 * The SSRF guard. The check runs where the socket is opened, inside undici's connector, so it
 * covers every connection a probe makes (redirect hops and legacy SSE endpoints included), and
 * the address that was checked is the one connected to: the guarded `lookup` hands net.connect
 * only checked addresses, so a DNS answer that changes between check and connect (rebinding)
 * cannot slip through. TLS SNI and the Host header keep the original host name.
 */

export class SsrfBlockedError extends Error {
  readonly code = 'ERR_SSRF_BLOCKED';
}

const defaultLookup: LookupFunction = (hostname, options, callback) =>
  dns.lookup(hostname, options, callback);

function notFound(hostname: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  err.code = 'ENOTFOUND';
  return err;
}

/** A net.connect `lookup` that resolves through `resolver` and refuses blocked addresses. */
export function createGuardedLookup(policy: AddressPolicy, resolver: LookupFunction): NetLookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname, { all: true }, (err, resolved) => {
      if (err) return callback(err, '', 0);
      const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
      const addresses = wanted ? resolved.filter((a) => a.family === wanted) : resolved;
      if (addresses.length === 0) return callback(notFound(hostname), '', 0);
      // Any blocked answer refuses the whole name: half-private names are a rebinding tell.
      for (const { address } of addresses) {
        const reason = blockedAddressReason(address, policy);
        if (reason) return callback(new SsrfBlockedError(`${hostname} resolves to ${reason}`), '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

export interface GuardedConnectorOptions {
  policy: AddressPolicy;
  lookup: LookupFunction | undefined;
  timeoutMs: number;
  /** Called once per opened socket with the time it took (lookup + TCP + TLS). */
  onConnected?: (ms: number) => void;
}

/** An undici `connect` function that applies the SSRF guard to every socket it opens. */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const base = buildConnector({
    timeout: options.timeoutMs,
    lookup: createGuardedLookup(options.policy, options.lookup ?? defaultLookup),
  } as buildConnector.BuildOptions);
  return (connectOptions, callback) => {
    // net.connect skips `lookup` for IP literals, so literals are checked here.
    if (isIP(connectOptions.hostname)) {
      const reason = blockedAddressReason(connectOptions.hostname, options.policy);
      if (reason) {
        callback(new SsrfBlockedError(reason), null);
        return;
      }
    }
    const started = performance.now();
    base(connectOptions, (err, socket) => {
      if (!err) options.onConnected?.(performance.now() - started);
      (callback as (e: Error | null, s: typeof socket) => void)(err, socket);
    });
  };
}

export type CheckTargetResult =
  | { ok: true; url: URL }
  | {
      ok: false;
      reason: string;
      code: 'invalid_url' | 'scheme_not_allowed' | 'private_address' | 'dns_failed';
    };

/**
 * Vets a URL before it is registered: http(s) only, no credentials, and (unless private networks
 * are allowed) every address its host resolves to must be public. Probes re-check at connect time;
 * this is the early, explainable refusal.
 */
export async function checkTargetUrl(
  url: string,
  opts: { allowPrivateNetworks: boolean; allowedCidrs?: readonly string[]; lookup?: LookupFunction },
): Promise<CheckTargetResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, code: 'invalid_url', reason: 'not a valid absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return {
      ok: false,
      code: 'scheme_not_allowed',
      reason: `scheme ${parsed.protocol} is not allowed; use http or https`,
    };
  }
  if (parsed.username || parsed.password) {
    return { ok: false, code: 'invalid_url', reason: 'URLs with embedded credentials are not accepted' };
  }
  if (opts.allowPrivateNetworks) return { ok: true, url: parsed };

  const policy: AddressPolicy = {
    allowPrivateNetworks: false,
    allowedCidrs: parseCidrs(opts.allowedCidrs ?? []),
  };
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIP(host)) {
    const reason = blockedAddressReason(host, policy);
    return reason
      ? { ok: false, code: 'private_address', reason: `${reason}, not a public address` }
      : { ok: true, url: parsed };
  }
  const resolver = opts.lookup ?? defaultLookup;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await new Promise((resolve, reject) =>
      resolver(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { ok: false, code: 'dns_failed', reason: `could not resolve ${host} (${code})` };
  }
  if (addresses.length === 0) return { ok: false, code: 'dns_failed', reason: `${host} has no addresses` };
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address, policy);
    if (reason)
      return {
        ok: false,
        code: 'private_address',
        reason: `${host} resolves to ${reason}, not a public address`,
      };
  }
  return { ok: true, url: parsed };
}
