/**
 * What one probe of one MCP server measured. Shared by the prober (packages/probe), which
 * produces it, the database layer, which stores it, and the trust engine, which judges it.
 */

/** How a probe ended. Only `up` and `degraded` mean "this is a working MCP server". */
export const PROBE_OUTCOMES = ['up', 'degraded', 'auth_required', 'not_mcp', 'down'] as const;
export type ProbeOutcome = (typeof PROBE_OUTCOMES)[number];

/** Why a probe did not come back `up`. `null` on a clean `up`. */
export const PROBE_ERROR_TYPES = [
  'dns',
  'connect',
  'tls',
  'timeout',
  'http_5xx',
  'http_4xx',
  'ssrf_blocked',
  'invalid_response',
  'protocol_error',
  'auth',
  'ping_failed',
  'tools_list_failed',
  'body_too_large',
  'other',
] as const;
export type ProbeErrorType = (typeof PROBE_ERROR_TYPES)[number];

/** Milliseconds per handshake phase; a phase that never ran is null. */
export interface ProbePhaseTimings {
  connect_ms: number | null;
  initialize_ms: number | null;
  ping_ms: number | null;
  tools_list_ms: number | null;
  total_ms: number;
}

export interface ProbeResult {
  outcome: ProbeOutcome;
  error_type: ProbeErrorType | null;
  /** Human-readable detail of the failure (bounded, no secrets). */
  error_message: string | null;
  /** Last HTTP status seen on the initialize exchange, if any. */
  http_status: number | null;
  timings: ProbePhaseTimings;
  /** `streamable_http` or `sse` (legacy HTTP+SSE transport), when MCP answered. */
  transport: 'streamable_http' | 'sse' | null;
  /** Protocol version the server agreed to in its initialize result. */
  protocol_version: string | null;
  server_info: { name: string; version: string } | null;
  tool_count: number | null;
  /** sha256 hex of canonical JSON of [{name, description, inputSchema}] sorted by name. */
  tools_hash: string | null;
  /**
   * Each tool's name and its own sha256 (canonical JSON of name, description, inputSchema),
   * sorted by name, so drift can say which tools were added, removed or altered.
   */
  tools: Array<{ name: string; hash: string }> | null;
  /** For auth_required: the resource-metadata URL from WWW-Authenticate, if given. */
  auth_resource_metadata: string | null;
  started_at: Date;
}
