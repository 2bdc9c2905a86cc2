import { runCli } from '@observatory/cli-app/test/cli-process.ts';
import { jobIds } from '@observatory/queue';
import { dispatchDueProbes } from '@observatory/scheduler-app';
import { createJobHandlers, createServices } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SERVERS = 20;

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a worker killed mid-batch (real Redis and Postgres)', () => {
  let fleet: Fleet;
  let runtime: TestRuntime;
  beforeAll(async () => {
    fleet = await startFleet();
    // a short job lock, so a dead worker's jobs are taken over within seconds
    runtime = await createTestRuntime({
      redis: true,
      env: { JOB_LOCK_MS: '2000', PROBE_PER_HOST_CONCURRENCY: '100' },
    });
    const services = await createServices(runtime);
    for (let i = 0; i < SERVERS; i++) {
      await services.registration.register({
        server_url: fleet.add({ kind: 'slow', delayMs: 2_500 }).url,
        name: `slow-${i}`,
      });
    }
  });
  afterAll(async () => {
    await runtime?.close();
    await fleet?.close();
  });

  it('runs its jobs again on another worker and stores each probe exactly once', async () => {
    const env = {
      ...runtime.childEnv,
      JOB_LOCK_MS: '2000',
      PROBE_PER_HOST_CONCURRENCY: '100',
      LOG_LEVEL: 'warn',
    };
    const first = runCli(['worker'], env);
    await first.waitFor(/worker running/);
    await dispatchDueProbes(runtime, new Date(Date.now() + 1_000));
    await until(
      async () => (await runtime.queue.counts()).probe.active >= SERVERS,
      15_000,
      'the first worker to take every job',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await runtime.db.sql`SELECT 1 FROM probe_results`).toHaveLength(0);

    const second = runCli(['worker'], env);
    try {
      await until(
        async () => (await runtime.db.sql`SELECT 1 FROM probe_results`).length >= SERVERS,
        40_000,
        'the second worker to finish the stalled jobs',
      );
      await until(
        async () => (await runtime.queue.counts()).probe.completed >= SERVERS,
        10_000,
        'all jobs completed',
      );
      const perServer = await runtime.db.sql<{ server_id: number; n: number }[]>`
        SELECT server_id, count(*)::int AS n FROM probe_results GROUP BY server_id`;
      expect(perServer).toHaveLength(SERVERS);
      expect(perServer.every((r) => r.n === 1)).toBe(true);
      expect((await runtime.queue.counts()).probe.failed).toBe(0);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 90_000);

  it('writes a probe once when its job runs twice (idempotent by probe id)', async () => {
    const services = await createServices(runtime);
    const { handlers, probeJobs } = createJobHandlers(services);
    const registered = await services.registration.register({
      server_url: fleet.add('healthy').url,
      name: 'healthy',
    });
    const server = (await runtime.repos.servers.findByUrl(registered.server_url))!;
    const slot = new Date(Date.now() - 60_000);
    const payload = { serverId: server.id, url: server.url, slot: slot.toISOString() };
    const ctx = { jobId: jobIds.probe(server.id, slot), attempt: 1 };
    await Promise.all([handlers.probe!(payload, ctx), handlers.probe!(payload, { ...ctx, attempt: 2 })]);
    await probeJobs.drain();
    const rows = await runtime.db.sql`SELECT 1 FROM probe_results WHERE probe_id = ${ctx.jobId}`;
    expect(rows).toHaveLength(1);
  });
});
