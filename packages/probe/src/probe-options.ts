import type { LookupAddress, LookupAllOptions } from 'node:dns';

/**
 * A resolver shaped like `dns.lookup(hostname, { all: true }, callback)`. Injectable so tests can
 * make a name resolve to loopback without touching real DNS.
 */
export type LookupFunction = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface ProbeOptions {
  /** Hard deadline for the whole probe, slow and trickling answers included. Default 10 s. */
  timeoutMs?: number;
  /** Cap on each response body; reading stops past it. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Lift the SSRF guard (local fleets and tests only). Default false. */
  allowPrivateNetworks?: boolean;
  /** CIDRs exempted from the SSRF guard while it is on, e.g. an operator's internal registry. */
  allowedCidrs?: readonly string[];
  /** Resolver for host names; defaults to `dns.lookup`. */
  lookup?: LookupFunction;
  /** Redirects followed on the first exchange, each hop re-checked at connect time. Default 3. */
  maxRedirects?: number;
  /** Sent as User-Agent and as the MCP clientInfo name. */
  clientName?: string;
  clientVersion?: string;
}

export const PROBE_DEFAULTS = {
  timeoutMs: 10_000,
  maxBodyBytes: 1024 * 1024,
  maxRedirects: 3,
  clientName: 'mcp-trust-observatory-probe',
  clientVersion: '1.0.0',
  /** tools/list pagination bounds: a server cannot keep a probe paging forever. */
  maxToolPages: 10,
  maxTools: 1000,
} as const;
