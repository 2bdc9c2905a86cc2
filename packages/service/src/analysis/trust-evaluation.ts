import {
  assessTrust,
  type Baseline,
  type Category,
  normalizeCategory,
  type ProbeOutcome,
  type TrustAssessment,
} from '@observatory/core';
import type { ServerRow } from '@observatory/db';
import type { TrustInputsSnapshot } from './server-analysis.ts';

/**
 * The verdict for a server at `now`: the analyzer's windowed counts (trust_inputs) together
 * with the probe state the result writer keeps current (latest outcome, failure streak, last
 * up), so a probe is reflected the moment it is stored, not only after the next analysis.
 */
export function evaluateTrust(
  server: Pick<
    ServerRow,
    'category' | 'last_outcome' | 'last_probe_at' | 'last_up_at' | 'consecutive_failures'
  > & {
    trust_inputs: TrustInputsSnapshot | null;
  },
  categoryBaselines: Map<Category, Baseline>,
  now: Date,
): TrustAssessment {
  const inputs = server.trust_inputs;
  return assessTrust({
    now,
    probes: inputs?.probes ?? { total: 0, up: 0 },
    reports: inputs?.reports ?? { total: 0, successes: 0 },
    latestProbe:
      server.last_outcome && server.last_probe_at
        ? { outcome: server.last_outcome as ProbeOutcome, at: server.last_probe_at }
        : null,
    lastUpAt: server.last_up_at,
    consecutiveFailures: server.consecutive_failures,
    latency: inputs?.latency ? { p50Ms: inputs.latency.p50Ms, samples: inputs.latency.samples } : null,
    categoryBaseline: categoryBaselines.get(normalizeCategory(server.category)) ?? null,
  });
}
