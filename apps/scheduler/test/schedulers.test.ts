import { createJobHandlers, createServices, type Runtime } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { dispatchDueProbes } from '../src/probe-dispatcher.ts';
import { enqueueComplianceSnapshot, startScheduler } from '../src/scheduler.ts';

async function until(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Registers `n` servers on a port nothing listens on (the probes are not what is tested). */
async function addServers(runtime: Runtime, n: number, prefix: string) {
  for (let i = 0; i < n; i++) {
    await runtime.repos.servers.upsert({
      url: `http://127.0.0.1:9/${prefix}${i}`,
      name: `${prefix}${i}`,
      category: 'other',
      source: 'registered',
    });
  }
}

/** A second process's view of the same database and queue (what a second scheduler has). */
async function twin(runtime: TestRuntime): Promise<Runtime> {
  const { loadConfig } = await import('@observatory/config');
  const { createLogger, openRuntime } = await import('@observatory/service');
  const config = loadConfig({ ...runtime.childEnv, PORT: '0' });
  return openRuntime(config, createLogger('silent'));
}

describe('several schedulers on real Redis and Postgres', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  it('never dispatch one server twice in a slot', async () => {
    const a = await createTestRuntime({ redis: true });
    open.push(a);
    const b = await twin(a);
    open.push(b);
    await addServers(a, 300, 's');
    const now = new Date(Date.now() + 1_000);
    // both schedulers tick at once, several times, with small pages so they interleave
    const results = await Promise.all([
      ...[0, 1, 2].map(() => dispatchDueProbes(a, now, 25)),
      ...[0, 1, 2].map(() => dispatchDueProbes(b, now, 25)),
    ]);
    expect(results.reduce((s, r) => s + r.claimed, 0)).toBe(300);
    const counts = await a.queue.counts();
    expect(counts.probe.waiting + counts.probe.active + counts.probe.completed).toBe(300);
  });

  it('stop claiming while the probe backlog is full, and take the rest once it drains', async () => {
    const a = await createTestRuntime({ redis: true, env: { PROBE_MAX_BACKLOG: '40' } });
    open.push(a);
    await addServers(a, 100, 'b');
    const now = new Date(Date.now() + 1_000);
    // no worker consumes: the first tick fills the backlog to the cap, the next claims nothing
    const first = await dispatchDueProbes(a, now, 25);
    expect(first).toMatchObject({ claimed: 40, backlog: 0, throttled: true });
    const second = await dispatchDueProbes(a, now, 25);
    expect(second).toMatchObject({ claimed: 0, backlog: 40, throttled: true });
    expect((await a.queue.counts()).probe.waiting).toBe(40);
    // the servers left unclaimed are still due: nothing was skipped
    const [due] = await a.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM servers WHERE next_probe_at <= ${now}`;
    expect(due!.n).toBe(60);

    // a worker drains the backlog; the scheduler then claims the rest, still within the cap
    let probed = 0;
    await a.queue.consume(
      {
        probe: async () => {
          probed++;
        },
      },
      { probe: 10 },
    );
    await until(async () => (await a.queue.backlog('probe')) === 0);
    const third = await dispatchDueProbes(a, now, 25);
    expect(third.claimed).toBe(40);
    await until(async () => (await a.queue.backlog('probe')) === 0);
    const fourth = await dispatchDueProbes(a, now, 25);
    expect(fourth).toMatchObject({ claimed: 20, throttled: false });
    await until(async () => probed === 100);
  });

  it('make one compliance snapshot per server per day', async () => {
    const a = await createTestRuntime({ redis: true });
    open.push(a);
    const b = await twin(a);
    open.push(b);
    const services = await createServices(a);
    for (let i = 0; i < 5; i++) {
      await services.registration.register({ server_url: `http://127.0.0.1:9/c${i}`, name: `c${i}` });
    }
    // tracked since before yesterday, so yesterday's snapshot covers them
    await a.db.sql`UPDATE servers SET created_at = now() - interval '3 days'`;
    const schedulerA = startScheduler(a, { tickMs: 60_000 });
    const schedulerB = startScheduler(b, { tickMs: 60_000 });
    open.push(schedulerA, schedulerB);
    // and each asks once more, as a cron firing on both would
    const day = await enqueueComplianceSnapshot(a);
    await enqueueComplianceSnapshot(b);
    const { handlers } = createJobHandlers(services);
    await a.queue.consume({ compliance: handlers.compliance! }, { compliance: 2 });
    await until(async () => (await a.queue.counts()).compliance.completed >= 1);
    await new Promise((r) => setTimeout(r, 300));
    const rows = await a.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM compliance_snapshots WHERE day = ${day}::date`;
    expect(rows[0]!.n).toBe(5);
    const counts = await a.queue.counts();
    expect(counts.compliance.completed).toBe(1);
    expect(counts.compliance.waiting + counts.compliance.delayed).toBe(0);
  });
});
