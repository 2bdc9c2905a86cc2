import { z } from 'zod';

/**
 * Every background job of the observatory: its queue, its payload schema and its retry policy.
 * Producers and consumers both validate against these schemas, so a payload that doesn't
 * match is refused at the edge rather than failing deep inside a handler.
 */
export const jobCatalog = {
  /** Probe one server for one slot. A server that is down is a result, not a job failure. */
  probe: {
    payload: z.object({
      serverId: z.number().int().positive(),
      url: z.url(),
      /** ISO time of the slot this probe belongs to (also part of the job id). */
      slot: z.iso.datetime(),
    }),
    // Only infrastructure errors (database unreachable …) throw, so retries are few and quick.
    attempts: 3,
    backoffMs: 1_000,
  },
  /** Fold new probe results and reports into rollups, anomalies and scores. */
  analyze: {
    payload: z.object({ reason: z.string().max(100) }),
    attempts: 5,
    backoffMs: 2_000,
  },
  /** Recompute the per-category baselines. */
  baselines: {
    payload: z.object({ reason: z.string().max(100) }),
    attempts: 3,
    backoffMs: 5_000,
  },
  /** Housekeeping: probe partitions ahead, retention, a signed audit checkpoint. */
  maintenance: {
    payload: z.object({ reason: z.string().max(100) }),
    attempts: 3,
    backoffMs: 5_000,
  },
  /** Daily compliance snapshot of every server for one UTC day. */
  compliance: {
    payload: z.object({ day: z.iso.date() }),
    attempts: 5,
    backoffMs: 30_000,
  },
} as const;

export type JobName = keyof typeof jobCatalog;
export const JOB_NAMES = Object.keys(jobCatalog) as JobName[];
export type JobPayload<N extends JobName> = z.infer<(typeof jobCatalog)[N]['payload']>;

/** Job ids are deterministic where duplicates must collapse (BullMQ ignores a second add); BullMQ forbids ":" in them. */
export const jobIds = {
  probe: (serverId: number, slot: Date | string) =>
    `probe-${serverId}-${typeof slot === 'string' ? Date.parse(slot) : slot.getTime()}`,
  compliance: (day: string) => `compliance-${day}`,
  /** One periodic job per period, however many schedulers ask for it. */
  periodic: (key: string, now: Date, periodMs: number) => `${key}-${Math.floor(now.getTime() / periodMs)}`,
};

export function parsePayload<N extends JobName>(name: N, payload: unknown): JobPayload<N> {
  return jobCatalog[name].payload.parse(payload) as JobPayload<N>;
}
