import type { ProbeOutcome } from './probe-result.ts';

/**
 * How each probe outcome counts. One place, so the rollup writer, the consecutive-failure
 * counter and the trust engine agree.
 *
 * - `up`, `degraded`: the server answered MCP → counts as up (degraded still answered the
 *   handshake; it only blocks PASS while it is the latest outcome).
 * - `down`, `not_mcp`: a failed probe → counts against availability and towards K.
 * - `auth_required`: the server is alive but will not talk to us without credentials. That
 *   says nothing about availability to an authorized client, so it is inconclusive: it is left
 *   out of availability counts and resets the failure streak, and it can never PASS.
 */
export type ProbeOutcomeClass = 'up' | 'failed' | 'inconclusive';

export function probeOutcomeClass(outcome: ProbeOutcome): ProbeOutcomeClass {
  switch (outcome) {
    case 'up':
    case 'degraded':
      return 'up';
    case 'down':
    case 'not_mcp':
      return 'failed';
    case 'auth_required':
      return 'inconclusive';
  }
}

export function isFailedProbe(outcome: ProbeOutcome): boolean {
  return probeOutcomeClass(outcome) === 'failed';
}

/** Counts towards availability (the `probes` of trust inputs and uptime). */
export function isConclusiveProbe(outcome: ProbeOutcome): boolean {
  return probeOutcomeClass(outcome) !== 'inconclusive';
}

/** The servers.consecutive_failures value after a probe with this outcome. */
export function nextConsecutiveFailures(previous: number, outcome: ProbeOutcome): number {
  return isFailedProbe(outcome) ? previous + 1 : 0;
}
