import { JOB_NAMES, jobIds } from '@observatory/queue';
import { createJobHandlers, createServices, type Services } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { type Exposition, parsePrometheusText } from './prometheus-text.ts';

const STATES = ['waiting', 'active', 'delayed', 'failed'];

describe('/metrics with BullMQ on Redis, after real probes', () => {
  let runtime: TestRuntime;
  let services: Services;
  let app: FastifyInstance;
  let fleet: Fleet;

  const scrape = async (): Promise<Exposition> => {
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(res.body);
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({ redis: true, env: { PROBE_TIMEOUT_MS: '3000' } });
    services = await createServices(runtime);
    app = await buildApp(runtime, { services, logRequests: false });
    fleet = await startFleet();
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await fleet?.close();
  });

  it('counts probes by outcome with their durations, and reads queue depths at scrape time', async () => {
    const before = await scrape();
    const targets = [
      { name: 'Healthy', url: fleet.add('healthy').url },
      { name: 'Web page', url: fleet.add('html').url },
      { name: 'Closed port', url: await deadUrl() },
    ];
    for (const t of targets) await services.registration.register({ server_url: t.url, name: t.name });

    // the worker's side, in this process: consume probe jobs from Redis
    const { handlers } = createJobHandlers(services);
    await runtime.queue.consume({ probe: handlers.probe! }, { probe: 3 });
    const due = await runtime.repos.servers.claimDue({
      now: new Date(),
      limit: 10,
      leaseSeconds: 300,
      jitterSeconds: 0,
    });
    expect(due).toHaveLength(3);
    await runtime.queue.enqueue(
      'probe',
      due.map((s) => ({
        id: jobIds.probe(s.id, s.slot),
        payload: { serverId: s.id, url: s.url, slot: s.slot.toISOString() },
      })),
    );

    // wait (bounded) until the three jobs completed
    const deadline = Date.now() + 20_000;
    let after = await scrape();
    while (
      after.sum('observatory_queue_jobs', { queue: 'probe', state: 'waiting' }) +
        after.sum('observatory_queue_jobs', { queue: 'probe', state: 'active' }) >
        0 ||
      after.sum('observatory_probes_total') - before.sum('observatory_probes_total') < 3
    ) {
      if (Date.now() > deadline) throw new Error('probes did not finish in 20 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await scrape();
    }

    // probes by outcome
    expect(after.types.get('observatory_probes_total')).toBe('counter');
    const delta = (outcome: string) =>
      after.sum('observatory_probes_total', { outcome }) -
      before.sum('observatory_probes_total', { outcome });
    expect(delta('up')).toBe(1);
    expect(delta('not_mcp')).toBe(1);
    expect(delta('down')).toBe(1);
    // every outcome is a series, even at zero
    for (const outcome of ['up', 'degraded', 'auth_required', 'not_mcp', 'down']) {
      expect(after.find('observatory_probes_total', { outcome })).toHaveLength(1);
    }

    // probe durations: a histogram per outcome, cumulative buckets ending at +Inf = count
    expect(after.types.get('observatory_probe_duration_seconds')).toBe('histogram');
    const buckets = after.find('observatory_probe_duration_seconds_bucket', { outcome: 'up' });
    const counts = buckets.map((b) => b.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(buckets.at(-1)!.labels.le).toBe('+Inf');
    expect(buckets.at(-1)!.value).toBe(
      after.sum('observatory_probe_duration_seconds_count', { outcome: 'up' }),
    );
    expect(after.sum('observatory_probe_duration_seconds_sum', { outcome: 'up' })).toBeGreaterThan(0);

    // queue depths per queue and state, read from Redis
    expect(after.sum('observatory_queue_up')).toBe(1);
    for (const queue of JOB_NAMES) {
      for (const state of STATES)
        expect(after.find('observatory_queue_jobs', { queue, state })).toHaveLength(1);
    }
    expect(after.sum('observatory_queue_jobs', { queue: 'probe', state: 'failed' })).toBe(0);

    // the report buffer, and Node's own metrics
    expect(after.find('observatory_report_ingest_buffer_depth')).toHaveLength(1);
    expect(after.find('process_cpu_user_seconds_total')).toHaveLength(1);
    expect(after.find('nodejs_eventloop_lag_seconds')).toHaveLength(1);
  }, 40_000);

  it('times API requests by route pattern and status, folding unknown URLs into one label', async () => {
    await app.inject({ url: '/api/stats' });
    await app.inject({ url: '/badge/some-server.svg?metric=uptime' });
    await app.inject({ url: '/no/such/page/123' });
    await app.inject({ url: '/no/such/page/456' });
    const m = await scrape();
    expect(m.types.get('observatory_http_request_duration_seconds')).toBe('histogram');
    const count = (labels: Record<string, string>) =>
      m.sum('observatory_http_request_duration_seconds_count', labels);
    expect(count({ method: 'GET', route: '/api/stats', status_code: '200' })).toBe(1);
    expect(count({ method: 'GET', route: '/badge/*', status_code: '200' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(2);
    const routes = new Set(
      m.find('observatory_http_request_duration_seconds_count').map((s) => s.labels.route),
    );
    expect([...routes].some((r) => r?.includes('123') || r?.includes('some-server'))).toBe(false);
  });
});

describe('/metrics while Redis is away', () => {
  it('still answers, with observatory_queue_up 0 and no queue depths', async () => {
    const runtime = await createTestRuntime({ redis: 'redis://127.0.0.1:1' });
    const app = await buildApp(runtime, { logRequests: false });
    try {
      const res = await app.inject({ url: '/metrics' });
      expect(res.statusCode).toBe(200);
      const m = parsePrometheusText(res.body);
      expect(m.sum('observatory_queue_up')).toBe(0);
      expect(m.find('observatory_queue_jobs')).toHaveLength(0);
      expect(m.find('observatory_probes_total', { outcome: 'up' })).toHaveLength(1);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});

describe('/metrics without Redis (embedded jobs)', () => {
  it('reads the in-process queue', async () => {
    const runtime = await createTestRuntime();
    expect(runtime.queue.kind).toBe('in-process');
    const app = await buildApp(runtime, { logRequests: false });
    try {
      const m = parsePrometheusText((await app.inject({ url: '/metrics' })).body);
      expect(m.sum('observatory_queue_up')).toBe(1);
      for (const state of STATES)
        expect(m.find('observatory_queue_jobs', { queue: 'probe', state })).toHaveLength(1);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
