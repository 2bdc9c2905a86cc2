/** How a virtual server of the fleet behaves. Strings are shorthands for the default settings. */
export type Behaviour =
  | 'healthy' // Streamable HTTP, JSON answers (lean responder unless the fleet says otherwise)
  | 'healthy-sse' // Streamable HTTP, answers as event streams (SDK)
  | 'stateful' // sessions with Mcp-Session-Id, event-stream answers (SDK)
  | 'legacy-sse' // the old HTTP+SSE transport only (SDK); POST to its URL gives 405
  | 'no-ping' // initialize and tools/list fine, ping is method-not-found (SDK)
  | 'changing-tools' // healthy, but every initialize sees a new tool list
  | 'slow'
  | 'flaky'
  | 'dead' // drops every connection without answering; see deadUrl() for a closed port
  | 'hangs' // accepts, reads, never answers
  | 'auth' // 401 with WWW-Authenticate: Bearer resource_metadata="…"
  | 'html' // 200 text/html page
  | 'http-500'
  | 'plain-ok' // 200 "OK" text/plain
  | 'wrong-jsonrpc' // 200 JSON-RPC whose result is not an initialize result
  | { kind: 'slow'; delayMs: number }
  | { kind: 'flaky'; failRate: number };

export type BehaviourName = Extract<Behaviour, string>;

export const BEHAVIOUR_NAMES: readonly BehaviourName[] = [
  'healthy',
  'healthy-sse',
  'stateful',
  'legacy-sse',
  'no-ping',
  'changing-tools',
  'slow',
  'flaky',
  'dead',
  'hangs',
  'auth',
  'html',
  'http-500',
  'plain-ok',
  'wrong-jsonrpc',
];

/** A behaviour with every setting spelled out. */
export type ResolvedBehaviour =
  | { kind: Exclude<BehaviourName, 'slow' | 'flaky'> }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'flaky'; failRate: number };

export const DEFAULT_SLOW_MS = 2_000;
export const DEFAULT_FAIL_RATE = 0.5;

export function resolveBehaviour(behaviour: Behaviour): ResolvedBehaviour {
  if (typeof behaviour !== 'string') return behaviour;
  if (behaviour === 'slow') return { kind: 'slow', delayMs: DEFAULT_SLOW_MS };
  if (behaviour === 'flaky') return { kind: 'flaky', failRate: DEFAULT_FAIL_RATE };
  return { kind: behaviour };
}
