import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from '../../scripts/lib/load-generator.ts';
import { badAnswers, reconcile } from '../../scripts/lib/reconcile.ts';
import { type FaultStack, serversProbedSince, sleep, startFaultStack, until } from './fault-stack.ts';

// Redis holds only the job queue and the shared rate limits: while it is away, everything
// that needs only Postgres (reads, verdicts with receipts, reports) must keep working, and
// workers and schedulers must pick up again by themselves once it is back — here a Redis that
// comes back EMPTY (no AOF, no RDB), the harshest case: every queued job is gone.
describe('Redis restarted during load (distributed mode)', () => {
  let stack: FaultStack;
  beforeAll(async () => {
    stack = await startFaultStack({ servers: 20, redisAppendOnly: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('keeps answering reads, verdicts and reports; stores every acknowledged report; workers resume', async () => {
    const { api, worker, scheduler, url, load } = await stack.startUnderLoad();
    await sleep(2_000);

    const downAt = Date.now();
    await stack.redis.stop();
    await until(
      async () => (await fetch(`${url}/ready`)).status === 503,
      5_000,
      '/ready to report Redis away',
    );
    await sleep(6_000);
    const upAt = Date.now();
    await stack.redis.start();
    const back = new Date();

    // Workers and the scheduler reconnect on their own: every server gets a new probe.
    await until(
      async () => (await serversProbedSince(stack.db, back)).size === stack.servers.length,
      30_000,
      'the workers to probe every server again after Redis came back',
    );
    await until(async () => (await fetch(`${url}/ready`)).status === 200, 10_000, '/ready to recover');
    await load.stop();

    const duringOutage = load.ledger.filter((e) => e.sentAt >= downAt && e.answeredAt < upAt);
    const outageTally = tally(duringOutage);
    // the outage was real and loaded: each kind was asked while Redis was away
    expect(outageTally['report 202']).toBeGreaterThan(50);
    expect(outageTally['read 200']).toBeGreaterThan(25);
    expect(outageTally['query 200']).toBeGreaterThan(10);
    // nothing needs Redis to answer: no refusals at all, before, during or after
    expect(badAnswers(load.ledger, false), JSON.stringify(tally(load.ledger))).toEqual([]);

    const counts = await reconcile(stack.db, load.ledger);
    expect(counts.acknowledgedLost).toEqual([]);
    expect(counts.strayOrDuplicateRows).toBe(0);
    expect(counts.reportsStored).toBe(counts.reportsSent);
    expect(counts.receiptsLost).toEqual([]);
    expect(counts.receiptsStored).toBe(counts.receiptsIssued);

    // every process rode it out and still stops cleanly
    for (const proc of [scheduler, worker, api]) {
      expect(proc.alive()).toBe(true);
      expect(await proc.stop()).toEqual({ code: 0, signal: null });
    }
  }, 60_000);

  // Once failed: BullmqQueue.close() awaited Worker.close() and Queue.close(), whose Redis
  // commands never fail while Redis is away, so the process never exited. Now the orderly close
  // gets the grace period only, then connections are dropped.
  it('a worker told to stop while Redis is away still exits within its grace period', async () => {
    const worker = await stack.spawn('worker');
    await stack.redis.stop();
    try {
      worker.child.kill('SIGTERM');
      // grace: PROBE_TIMEOUT_MS (5 s) + 2 s for in-flight probes, then the pool closes
      const exit = await Promise.race([worker.exited, sleep(12_000).then(() => 'still running')]);
      expect(exit).toEqual({ code: 0, signal: null });
    } finally {
      await stack.redis.start();
    }
  }, 30_000);
});
