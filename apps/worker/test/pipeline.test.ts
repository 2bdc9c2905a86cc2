import { dispatchDueProbes } from '@observatory/scheduler-app';
import { createServices } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { type BehaviourName, deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../src/worker.ts';

/** What every testkit behaviour must be classified as, whatever runs the jobs. */
const EXPECTED: Array<[BehaviourName | 'closed-port', string]> = [
  ['healthy', 'up'],
  ['healthy-sse', 'up'],
  ['stateful', 'up'],
  ['legacy-sse', 'up'],
  ['changing-tools', 'up'],
  ['slow', 'up'],
  ['no-ping', 'degraded'],
  ['auth', 'auth_required'],
  ['html', 'not_mcp'],
  ['plain-ok', 'not_mcp'],
  ['wrong-jsonrpc', 'not_mcp'],
  ['http-500', 'down'],
  ['hangs', 'down'],
  ['dead', 'down'],
  ['closed-port', 'down'],
];

describe.each([
  ['embedded (PGlite, in-process jobs)', { database: 'embedded' as const }],
  ['distributed (Postgres, BullMQ on Redis)', { redis: true }],
])('probe pipeline, %s', (_label, mode) => {
  let fleet: Fleet;
  let runtime: TestRuntime;
  const ids = new Map<string, number>();

  beforeAll(async () => {
    fleet = await startFleet();
    runtime = await createTestRuntime({
      ...mode,
      env: { PROBE_TIMEOUT_MS: '4000', PROBE_PER_HOST_CONCURRENCY: '50' },
    });
    const services = await createServices(runtime);
    for (const [behaviour] of EXPECTED) {
      const url =
        behaviour === 'closed-port'
          ? await deadUrl()
          : fleet.add(behaviour === 'slow' ? { kind: 'slow', delayMs: 100 } : behaviour).url;
      const r = await services.registration.register({ server_url: url, name: behaviour });
      ids.set(behaviour, (await runtime.repos.servers.findByUrl(r.server_url))!.id);
    }
    await startWorker(services);
  });
  afterAll(async () => {
    await runtime?.close();
    await fleet?.close();
  });

  it('classifies every testkit behaviour', async () => {
    await dispatchDueProbes(runtime, new Date(Date.now() + 1_000));
    const outcomes = new Map<string, string>();
    const deadline = Date.now() + 20_000;
    while (outcomes.size < EXPECTED.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      for (const [behaviour, id] of ids) {
        const [latest] = await runtime.repos.probeResults.latestForServer(id, 1);
        if (latest) outcomes.set(behaviour, latest.outcome);
      }
    }
    expect(Object.fromEntries(outcomes)).toEqual(Object.fromEntries(EXPECTED));
  });
});
