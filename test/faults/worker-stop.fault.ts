import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicateProbes, type FaultStack, sleep, startFaultStack, until } from './fault-stack.ts';

// Every fleet server answers each request after SLOW_MS, so a probe (four requests) takes
// ~4 × SLOW_MS and a worker always has a batch in flight when it is stopped.
const SERVERS = 16;
const SLOW_MS = 600;
const PROBE_TIMEOUT_MS = 5_000;

describe('a worker stopped mid-batch (distributed mode)', () => {
  let stack: FaultStack;
  beforeAll(async () => {
    stack = await startFaultStack({
      servers: SERVERS,
      behaviour: { kind: 'slow', delayMs: SLOW_MS },
      env: { PROBE_TIMEOUT_MS: String(PROBE_TIMEOUT_MS) },
    });
    await stack.spawn('scheduler');
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Ids of the probe jobs active right now, once at least `min` are. */
  async function activeJobs(min: number): Promise<string[]> {
    const probe = stack.queue('probe');
    let ids: string[] = [];
    await until(
      async () => {
        ids = (await probe.getJobs(['active'])).map((j) => j.id!).filter(Boolean);
        return ids.length >= min;
      },
      20_000,
      `${min} probe jobs to be active`,
    );
    return ids;
  }

  async function rowsFor(ids: string[]): Promise<Map<string, number>> {
    const rows = await stack.db.sql<{ probe_id: string; n: number }[]>`
      SELECT probe_id, count(*)::int AS n FROM probe_results WHERE probe_id = ANY(${ids}) GROUP BY probe_id`;
    return new Map(rows.map((r) => [r.probe_id, r.n]));
  }

  it('SIGTERM: finishes its in-flight probes, stores them, exits 0 within the grace period', async () => {
    const worker = await stack.spawn('worker');
    const inFlight = await activeJobs(SERVERS / 2);
    worker.child.kill('SIGTERM');
    // the grace period is PROBE_TIMEOUT_MS + 2 s; past a few more seconds it is a hang
    const exit = await Promise.race([worker.exited, sleep(PROBE_TIMEOUT_MS + 5_000).then(() => 'hung')]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(worker.output()).toMatch(/stopped cleanly/);

    // every probe in flight at SIGTERM was finished and stored once, and its job completed
    const stored = await rowsFor(inFlight);
    expect(inFlight.filter((id) => stored.get(id) !== 1)).toEqual([]);
    const states = await Promise.all(inFlight.map((id) => stack.queue('probe').getJobState(id)));
    expect(states.every((s) => s === 'completed')).toBe(true);
  }, 45_000);

  it('SIGKILL: its jobs run again on another worker once the lock expires, stored once', async () => {
    const victim = await stack.spawn('worker');
    const inFlight = await activeJobs(SERVERS / 2);
    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const rescuer = await stack.spawn('worker');
    const probe = stack.queue('probe');
    await until(
      async () => {
        const states = await Promise.all(inFlight.map((id) => probe.getJobState(id)));
        return states.every((s) => s === 'completed');
      },
      30_000,
      'the killed worker’s jobs to complete on the rescuer',
    );
    const stored = await rowsFor(inFlight);
    expect(inFlight.filter((id) => stored.get(id) !== 1)).toEqual([]);
    expect(await probe.getFailedCount()).toBe(0);
    expect(await duplicateProbes(stack.db)).toBe(0);
    expect(await rescuer.stop()).toEqual({ code: 0, signal: null });
  }, 50_000);
});
