import type { Verdict } from '@observatory/core';
import { jobIds } from '@observatory/queue';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeDirty, loadCategoryBaselines, recomputeBaselines } from '../src/analysis/analyzer.ts';
import { evaluateTrust } from '../src/analysis/trust-evaluation.ts';
import { createJobHandlers } from '../src/jobs.ts';
import { createServices, type Services } from '../src/services.ts';
import { createTestRuntime, type TestRuntime } from '../src/testing.ts';

/**
 * The trust engine end to end through simulated time: real probes against the testkit fleet,
 * real Postgres, real analysis — but the clock is injected, so two simulated days take seconds.
 */
const INTERVAL_S = 1_800;
const STEP_MS = INTERVAL_S * 1000;

describe('trust engine through simulated time', () => {
  let fleet: Fleet;
  let flakyFleet: Fleet;
  let runtime: TestRuntime;
  let services: Services;
  let now: Date;
  const ids: Record<string, number> = {};
  const fleetIds: Record<string, string> = {};
  const verdicts: Record<string, Verdict[]> = {};

  async function register(label: string, url: string, category = 'weather') {
    const r = await services.registration.register({ server_url: url, name: label, category });
    const server = await runtime.repos.servers.findByUrl(r.server_url);
    ids[label] = server!.id;
    verdicts[label] = [];
  }

  /** One probe interval: claim what is due, probe it for real, write, analyze, judge. */
  async function step(handlers: ReturnType<typeof createJobHandlers>['handlers']) {
    now = new Date(now.getTime() + STEP_MS);
    const due = await runtime.repos.servers.claimDue({
      now,
      limit: 100,
      leaseSeconds: INTERVAL_S,
      jitterSeconds: 0,
    });
    await Promise.all(
      due.map((s) =>
        handlers.probe!(
          { serverId: s.id, url: s.url, slot: s.slot.toISOString() },
          { jobId: jobIds.probe(s.id, s.slot), attempt: 1 },
        ),
      ),
    );
    await analyzeDirty(runtime.db.sql, now);
    const baselines = await loadCategoryBaselines(runtime.db.sql);
    for (const [label, id] of Object.entries(ids)) {
      const server = await runtime.repos.servers.findById(id);
      verdicts[label]!.push(evaluateTrust(server as never, baselines, now).verdict);
    }
  }

  beforeAll(async () => {
    fleet = await startFleet();
    flakyFleet = await startFleet({ seed: 7 });
    runtime = await createTestRuntime({
      env: { PROBE_INTERVAL_S: String(INTERVAL_S), PROBE_TIMEOUT_MS: '6000' },
    });
    services = await createServices(runtime);
    now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    // slow-later answers in ~50 ms normally: far above the few ms of scheduling noise a loaded
    // test machine adds, so "ten times slower" stays ten times slower.
    const start = { 'slow-later': { kind: 'slow', delayMs: 50 }, dies: 'healthy', tools: 'healthy' } as const;
    for (const b of ['healthy', 'slow-later', 'dies', 'html', 'auth', 'tools'] as const) {
      const s = fleet.add(b in start ? start[b as keyof typeof start] : (b as 'healthy'));
      fleetIds[b] = s.id;
      await register(b, s.url);
    }
    // four more healthy peers make a category baseline
    for (let i = 0; i < 4; i++) await register(`peer-${i}`, fleet.add('healthy').url);
    await register('flaky', flakyFleet.add({ kind: 'flaky', failRate: 0.3 }).url);
    await register('dead', await deadUrl());
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    await fleet?.close();
    await flakyFleet?.close();
  });

  it('judges each behaviour as documented in docs/scoring.md', async () => {
    const { handlers } = createJobHandlers(services, { clock: () => now });
    // Day one: everything as registered. Baselines are recomputed as the scheduler would.
    for (let i = 0; i < 48; i++) {
      await step(handlers);
      if (i % 6 === 5) await recomputeBaselines(runtime.db.sql, now);
    }
    // healthy → PASS, and it got there within its first 10 probes
    expect(verdicts.healthy!.at(-1)).toBe('PASS');
    expect(verdicts.healthy!.indexOf('PASS')).toBeLessThanOrEqual(9);
    // a 30 % flaky server never passes; not_mcp and auth_required never pass
    expect(verdicts.flaky).not.toContain('PASS');
    expect(verdicts.html).not.toContain('PASS');
    expect(verdicts.auth).not.toContain('PASS');
    expect(verdicts.html!.at(-1)).toBe('FAIL');
    expect(verdicts.dead!.at(-1)).toBe('FAIL');

    // Day two: one server dies, one slows down tenfold, one changes its tools.
    const before = verdicts.dies!.length;
    fleet.setBehaviour(fleetIds.dies!, 'dead');
    fleet.setBehaviour(fleetIds['slow-later']!, { kind: 'slow', delayMs: 500 });
    fleet.changeTools(fleetIds.tools!);
    await step(handlers);
    await step(handlers);
    // dead → FAIL within 2 probe intervals
    expect(verdicts.dies!.slice(before)).toContain('FAIL');
    // 10× slowdown → a latency anomaly opened within 2 intervals
    const open = await runtime.repos.anomalies.openFor([ids['slow-later']!]);
    // against its own history (it is always slower than its category peers, so the category-scope
    // latency anomaly stays open throughout: that is correct, and not what this checks)
    expect(open.some((a) => a.metric === 'latency' && a.scope === 'self')).toBe(true);
    // tool-list change → a drift event saying what changed
    const [drift] = await runtime.db.sql<{ added: string[]; removed: string[]; altered: string[] }[]>`
      SELECT added, removed, altered FROM drift_events WHERE server_id = ${ids.tools!}`;
    expect(drift).toBeDefined();
    expect(drift!.added.length + drift!.removed.length + drift!.altered.length).toBeGreaterThan(0);

    // recovery clears the anomaly
    fleet.setBehaviour(fleetIds['slow-later']!, { kind: 'slow', delayMs: 50 });
    for (let i = 0; i < 3; i++) await step(handlers);
    if (process.env.DEBUG_SIM)
      for (const [k, v] of Object.entries(verdicts)) console.log(k, v.map((x) => x[0]).join(''));
    const stillOpen = await runtime.repos.anomalies.openFor([ids['slow-later']!]);
    expect(stillOpen.some((a) => a.metric === 'latency' && a.scope === 'self')).toBe(false);
    const history = await runtime.repos.anomalies.recentFor(ids['slow-later']!);
    expect(history.some((a) => a.metric === 'latency' && a.scope === 'self' && a.cleared_at !== null)).toBe(
      true,
    );
  }, 120_000);

  it('says UNCERTAIN with evidence "none" when nothing was measured recently', async () => {
    const baselines = await loadCategoryBaselines(runtime.db.sql);
    const server = await runtime.repos.servers.findById(ids.healthy!);
    const muchLater = new Date(now.getTime() + 3 * 86_400_000);
    const trust = evaluateTrust(server as never, baselines, muchLater);
    expect(trust.verdict).toBe('UNCERTAIN');
    expect(trust.evidence).toBe('none');
    expect(trust.reason_code).toBe('no_runtime_evidence');
  });
});
