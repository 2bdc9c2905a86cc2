export { normalizeServerUrl } from './normalize-url.ts';
export type { ProbeDetails } from './probe.ts';
export { probe, probeWithDetails } from './probe.ts';
export type { LookupFunction, ProbeOptions } from './probe-options.ts';
export { PROBE_DEFAULTS } from './probe-options.ts';
export type { CheckTargetResult } from './ssrf-guard.ts';
export { checkTargetUrl, SsrfBlockedError } from './ssrf-guard.ts';
export { canonicalJson, fingerprintTools } from './tools-hash.ts';
