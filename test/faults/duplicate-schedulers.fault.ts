import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchedLines } from '../../scripts/lib/distributed.ts';
import {
  duplicateProbes,
  type FaultStack,
  type ObservatoryProcess,
  PROBE_INTERVAL_S,
  sleep,
  startFaultStack,
  until,
} from './fault-stack.ts';

const SERVERS = 40;
const RUN_MS = 25_000;
// A healthy server's next slot is its claim time + interval + up to 10% jitter; the claim
// comes at most a scheduler tick (1 s) plus a little after the slot. A gap of two intervals
// or more means a slot was skipped; a gap under one interval means a server was probed twice.
const MAX_GAP_S = PROBE_INTERVAL_S * 2;

/** Sum of `claimed` over a scheduler's "probes dispatched" debug lines. */
function claimedBy(scheduler: ObservatoryProcess): number {
  return dispatchedLines(scheduler.output()).reduce((sum, line) => sum + line.claimed, 0);
}

describe('two schedulers and three workers (distributed mode)', () => {
  let stack: FaultStack;
  beforeAll(async () => {
    stack = await startFaultStack({ servers: SERVERS });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('probe every server once per slot, skip no slot, and store exactly what was dispatched', async () => {
    const workers = await Promise.all([stack.spawn('worker'), stack.spawn('worker'), stack.spawn('worker')]);
    // debug logs carry each tick's claim count: what was dispatched, to compare with what was stored
    const schedulers = await Promise.all([
      stack.spawn('scheduler', { LOG_LEVEL: 'debug' }),
      stack.spawn('scheduler', { LOG_LEVEL: 'debug' }),
    ]);
    const startedAt = Date.now();
    await sleep(RUN_MS);
    for (const s of schedulers) expect(await s.stop()).toEqual({ code: 0, signal: null });
    const stoppedAt = Date.now();

    const probe = stack.queue('probe');
    await until(
      async () => {
        const c = await probe.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(c).every((n) => n === 0);
      },
      15_000,
      'the probe queue to drain',
    );
    for (const w of workers) expect(await w.stop()).toEqual({ code: 0, signal: null });

    // Dispatched = completed = stored, and both schedulers took part.
    const claimed = schedulers.map(claimedBy);
    expect(claimed.every((n) => n > 0)).toBe(true);
    const rows = await stack.db.sql<{ server_id: number; scheduled_at: Date }[]>`
      SELECT server_id, scheduled_at FROM probe_results ORDER BY server_id, scheduled_at`;
    expect(rows.length).toBe(claimed[0]! + claimed[1]!);
    expect(await probe.getCompletedCount()).toBe(rows.length);
    expect(await probe.getFailedCount()).toBe(0);
    expect(await duplicateProbes(stack.db)).toBe(0);

    // Every server: its first slot (due since registration, before any scheduler ran) probed at
    // start, then one probe per slot, the last one within the final two intervals.
    const slots = new Map<number, number[]>();
    for (const r of rows)
      slots.set(r.server_id, [...(slots.get(r.server_id) ?? []), r.scheduled_at.getTime()]);
    expect(slots.size).toBe(SERVERS);
    const problems: string[] = [];
    for (const [server, times] of slots) {
      if (times[0]! > startedAt) problems.push(`server ${server}: registration slot missing`);
      if (times.at(-1)! < stoppedAt - MAX_GAP_S * 1000) problems.push(`server ${server}: last slot missing`);
      for (let i = 1; i < times.length; i++) {
        const gap = (times[i]! - times[i - 1]!) / 1000;
        if (gap < PROBE_INTERVAL_S) problems.push(`server ${server}: probed twice (${gap} s apart)`);
        if (i > 1 && gap >= MAX_GAP_S) problems.push(`server ${server}: slot skipped (${gap} s gap)`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
