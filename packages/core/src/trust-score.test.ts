import { describe, expect, it } from 'vitest';
import type { Baseline } from './baselines.ts';
import { computeBaseline } from './baselines.ts';
import type { ProbeOutcome } from './probe-result.ts';
import { CATEGORY_BASELINE, repeat, runTimeline, type TimelinePoint } from './probe-timeline.test-support.ts';
import { seededRandom } from './seeded-random.test-support.ts';
import { TRUST_RULES, type TrustRules } from './trust-rules.ts';
import { assessTrust, type TrustInput } from './trust-score.ts';
import { wilsonLowerBound } from './wilson.ts';

const NOW = new Date('2026-05-10T12:00:00Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);

/** A healthy, fast server with a day of perfect probes and no reports. */
function input(overrides: Partial<TrustInput> = {}): TrustInput {
  return {
    now: NOW,
    probes: { total: 288, up: 288 },
    reports: { total: 0, successes: 0 },
    latestProbe: { outcome: 'up', at: ago(60) },
    lastUpAt: ago(60),
    consecutiveFailures: 0,
    latency: { p50Ms: 120, samples: 288 },
    categoryBaseline: CATEGORY_BASELINE,
    ...overrides,
  };
}

const latencyAtZ = (z: number, b: Baseline = CATEGORY_BASELINE) =>
  Math.exp(b.latency!.log_mean + z * Math.max(b.latency!.log_stddev, 0.2));

describe('assessTrust: evidence', () => {
  it('says so when there is no runtime evidence at all', () => {
    const a = assessTrust(input({ latestProbe: null, lastUpAt: null, probes: { total: 0, up: 0 } }));
    expect(a).toMatchObject({
      verdict: 'UNCERTAIN',
      reason_code: 'no_runtime_evidence',
      evidence: 'none',
      score: null,
      confidence: 0,
      components: { availability: null, reported_success: null, latency: null, freshness: null },
    });
    expect(a.reason).toMatch(/no runtime evidence/);
  });

  it('treats a probe older than the probe window as no evidence', () => {
    const stale = ago(TRUST_RULES.windows.probeHours * 3600 + 1);
    const a = assessTrust(input({ latestProbe: { outcome: 'up', at: stale }, lastUpAt: stale }));
    expect(a).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'no_runtime_evidence', evidence: 'none' });
  });

  it('never PASSes or FAILs on agent reports alone', () => {
    const good = assessTrust(input({ latestProbe: null, reports: { total: 1000, successes: 1000 } }));
    expect(good).toMatchObject({
      verdict: 'UNCERTAIN',
      reason_code: 'reports_only',
      evidence: 'reports_only',
    });
    expect(good.score).toBeCloseTo(100 * wilsonLowerBound(1000, 1000), 1);
    expect(good.components.reported_success!.weight).toBe(1);
    expect(good.components.availability).toBeNull();
    const bad = assessTrust(input({ latestProbe: null, reports: { total: 100, successes: 0 } }));
    expect(bad).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'reports_only', score: 0 });
  });

  it('names the evidence it has', () => {
    expect(assessTrust(input()).evidence).toBe('probes_only');
    expect(assessTrust(input({ reports: { total: 5, successes: 5 } })).evidence).toBe('probes_and_reports');
  });
});

describe('assessTrust: score', () => {
  it('is the weighted mean of the present components, weights renormalized', () => {
    const a = assessTrust(input({ reports: { total: 40, successes: 38 } }));
    const c = a.components;
    const weights = [c.availability!, c.reported_success!, c.latency!, c.freshness!].map((x) => x.weight);
    expect(weights.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 3);
    expect(c.availability!.weight).toBeCloseTo(0.6, 4);
    const expected =
      100 *
      (0.6 * c.availability!.value +
        0.2 * c.reported_success!.value +
        0.1 * c.latency!.value +
        0.1 * c.freshness!.value);
    expect(a.score).toBeCloseTo(expected, 1);

    const probesOnly = assessTrust(input()).components;
    expect(probesOnly.availability!.weight).toBeCloseTo(0.75, 4);
    expect(probesOnly.reported_success).toBeNull();
  });

  it('bases availability on the Wilson lower bound, capped by observed failures', () => {
    const ten = assessTrust(input({ probes: { total: 10, up: 10 } })).components.availability!;
    expect(ten.value).toBeCloseTo(wilsonLowerBound(10, 10), 4);
    // 90 % observed over a day: bound ≈ 0.86, but the cap 1 − 4 × 0.1 = 0.6 rules.
    const ninety = assessTrust(input({ probes: { total: 280, up: 252 } })).components.availability!;
    expect(ninety.value).toBeCloseTo(0.6, 4);
    expect(ninety.detail).toMatchObject({ failure_cap: 0.6, observed_rate: 0.9 });
    const seventy = assessTrust(input({ probes: { total: 280, up: 196 } })).components.availability!;
    expect(seventy.value).toBe(0);
  });

  it('maps latency z against the category: full credit to z 1, none from z 3', () => {
    const at = (z: number) =>
      assessTrust(input({ latency: { p50Ms: latencyAtZ(z), samples: 288 } })).components.latency!;
    expect(at(-2).value).toBe(1);
    expect(at(1).value).toBeCloseTo(1, 3);
    expect(at(2).value).toBeCloseTo(0.5, 3);
    expect(at(3).value).toBeCloseTo(0, 3);
    expect(at(5).value).toBe(0);
    expect(at(2).detail.z).toBeCloseTo(2, 2);
  });

  it('leaves latency out without a usable category baseline or latency', () => {
    const fewServers = computeBaseline(
      [100, 200, 300, 400].map((ms) => ({
        latencyMs: ms,
        latencySamples: 10,
        probes: 10,
        probesUp: 10,
        reports: 0,
        reportSuccesses: 0,
      })),
    );
    expect(assessTrust(input({ categoryBaseline: fewServers })).components.latency).toBeNull();
    expect(assessTrust(input({ categoryBaseline: null })).components.latency).toBeNull();
    expect(assessTrust(input({ latency: null })).components.latency).toBeNull();
    const without = assessTrust(input({ latency: null })).components;
    expect(without.availability!.weight).toBeCloseTo(0.6 / 0.7, 4);
  });

  it('decays freshness with the age of the last good probe', () => {
    const at = (lastUpAt: Date | null) => assessTrust(input({ lastUpAt })).components.freshness!.value;
    expect(at(NOW)).toBe(1);
    expect(at(ago(6 * 3600))).toBeCloseTo(0.5, 6);
    expect(at(ago(24 * 3600))).toBeCloseTo(1 / 16, 6);
    expect(at(null)).toBe(0);
  });

  it('grows confidence with samples and coverage', () => {
    const c = (o: Partial<TrustInput>) => assessTrust(input(o)).confidence;
    expect(c({ probes: { total: 10, up: 10 } })).toBeLessThan(c({ probes: { total: 288, up: 288 } }));
    expect(c({ reports: { total: 50, successes: 50 } })).toBeGreaterThan(c({}));
    expect(c({ latency: null })).toBeLessThan(c({}));
    expect(c({})).toBeLessThan(1);
    expect(
      c({
        probes: { total: 1e6, up: 1e6 },
        reports: { total: 1e6, successes: 1e6 },
        latency: { p50Ms: 120, samples: 1e6 },
      }),
    ).toBeGreaterThan(0.55);
  });
});

describe('assessTrust: verdict rules', () => {
  it('PASSes a healthy server that was up at the latest probe', () => {
    expect(assessTrust(input())).toMatchObject({ verdict: 'PASS', reason_code: 'healthy' });
  });

  it('FAILs after K consecutive failed probes, naming not_mcp when that is the answer', () => {
    const down = (n: number, outcome: ProbeOutcome = 'down') =>
      assessTrust(
        input({ latestProbe: { outcome, at: ago(10) }, consecutiveFailures: n, lastUpAt: ago(600) }),
      );
    expect(down(1)).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'latest_probe_failed' });
    expect(down(2)).toMatchObject({ verdict: 'FAIL', reason_code: 'consecutive_failures' });
    expect(down(2, 'not_mcp')).toMatchObject({ verdict: 'FAIL', reason_code: 'not_mcp' });
  });

  it('takes K from the rules', () => {
    const rules: TrustRules = {
      ...TRUST_RULES,
      verdict: { ...TRUST_RULES.verdict, failAfterConsecutiveFailures: 3 },
    };
    const i = input({ latestProbe: { outcome: 'down', at: ago(10) }, consecutiveFailures: 2 });
    expect(assessTrust(i, rules).verdict).toBe('UNCERTAIN');
    expect(assessTrust({ ...i, consecutiveFailures: 3 }, rules).verdict).toBe('FAIL');
  });

  it('never PASSes a server that demands authorization', () => {
    const a = assessTrust(input({ latestProbe: { outcome: 'auth_required', at: ago(10) } }));
    expect(a).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'auth_required' });
    const onlyAuth = assessTrust(
      input({
        latestProbe: { outcome: 'auth_required', at: ago(10) },
        probes: { total: 0, up: 0 },
        lastUpAt: null,
      }),
    );
    expect(onlyAuth).toMatchObject({
      verdict: 'UNCERTAIN',
      reason_code: 'auth_required',
      score: null,
      evidence: 'probes_only',
    });
  });

  it('does not PASS while the latest probe is degraded', () => {
    const a = assessTrust(input({ latestProbe: { outcome: 'degraded', at: ago(10) } }));
    expect(a).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'degraded' });
  });

  it('needs enough probes before the score may PASS or FAIL', () => {
    const nine = assessTrust(input({ probes: { total: 9, up: 9 } }));
    expect(nine).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'insufficient_evidence' });
    expect(nine.score).toBeGreaterThan(70);
    const badFew = assessTrust(input({ probes: { total: 9, up: 2 } }));
    expect(badFew.score).toBeLessThan(30);
    expect(badFew).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'insufficient_evidence' });
    const badTen = assessTrust(input({ probes: { total: 10, up: 2 } }));
    expect(badTen).toMatchObject({ verdict: 'FAIL', reason_code: 'low_score' });
  });

  it('FAILs a low score even when the latest probe answered', () => {
    expect(assessTrust(input({ probes: { total: 288, up: 200 } }))).toMatchObject({
      verdict: 'FAIL',
      reason_code: 'low_score',
    });
  });

  it('holds back PASS below 95 % observed availability however high the score', () => {
    const a = assessTrust(input({ probes: { total: 288, up: 270 } }));
    expect(a.score).toBeGreaterThanOrEqual(70);
    expect(a).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'recent_failures' });
    expect(assessTrust(input({ probes: { total: 288, up: 276 } })).verdict).toBe('PASS');
  });

  it('is UNCERTAIN in the middle band', () => {
    const a = assessTrust(
      input({ probes: { total: 288, up: 240 }, latency: { p50Ms: latencyAtZ(4), samples: 240 } }),
    );
    expect(a.score).toBeGreaterThanOrEqual(30);
    expect(a.score).toBeLessThan(70);
    expect(a).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'moderate_score' });
  });
});

const verdicts = (points: TimelinePoint[]) => points.map((p) => p.assessment.verdict);

describe('requirement scenarios (probe sequences through time, 300 s apart)', () => {
  it('a healthy, fast server PASSes after at most 10 good probes, with no reports', () => {
    for (const categoryBaseline of [CATEGORY_BASELINE, null]) {
      const run = runTimeline(repeat('up', 600), { categoryBaseline });
      const firstPass = run.findIndex((p) => p.assessment.verdict === 'PASS') + 1;
      expect(firstPass).toBeGreaterThan(0);
      expect(firstPass).toBeLessThanOrEqual(10);
      expect(verdicts(run.slice(firstPass - 1)).every((v) => v === 'PASS')).toBe(true);
      expect(verdicts(run.slice(0, firstPass - 1)).every((v) => v === 'UNCERTAIN')).toBe(true);
    }
  });

  it('a 30 %-flaky server never PASSes, whatever the order of its failures', () => {
    const patterns: ProbeOutcome[][] = [
      ['up', 'up', 'down', 'up', 'up', 'down', 'up', 'up', 'up', 'down'],
      ['up', 'up', 'up', 'up', 'up', 'up', 'up', 'down', 'down', 'down'],
      ['up', 'up', 'up', 'down', 'up', 'up', 'up', 'up', 'down', 'down'],
    ];
    for (const pattern of patterns) {
      for (let shift = 0; shift < pattern.length; shift++) {
        const run = runTimeline(
          Array.from({ length: 600 }, (_, i) => pattern[(i + shift) % pattern.length]!),
        );
        expect(verdicts(run)).not.toContain('PASS');
        // Once the day-long window is full it is judged risky.
        expect(run.slice(288).every((p) => p.assessment.verdict === 'FAIL')).toBe(true);
      }
    }
  });

  it('a randomly 30 %-flaky server PASSes only on an opening lucky streak, and rarely', () => {
    let runsWithPass = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const random = seededRandom(seed);
      const run = runTimeline(Array.from({ length: 400 }, () => (random() < 0.3 ? 'down' : 'up')));
      const passes = run.filter((p) => p.assessment.verdict === 'PASS');
      if (passes.length > 0) runsWithPass++;
      // A PASS needs ≥ 95 % of the window up: only possible while the window is short.
      for (const p of passes) expect(p.probe).toBeLessThanOrEqual(40);
    }
    // Theory: ≈ 3.5 % (no failure in the first 10 probes: 2.8 %; ≤ 1 in the first 20: 0.8 %).
    expect(runsWithPass / 150).toBeLessThan(0.07);
  });

  it('a dead server is FAIL within two probe intervals of dying, and stays FAIL', () => {
    const run = runTimeline([...repeat<ProbeOutcome>('up', 100), ...repeat<ProbeOutcome>('down', 400)]);
    expect(run[99]!.assessment.verdict).toBe('PASS');
    expect(run[100]!.assessment).toMatchObject({ verdict: 'UNCERTAIN', reason_code: 'latest_probe_failed' });
    expect(run[101]!.assessment).toMatchObject({ verdict: 'FAIL', reason_code: 'consecutive_failures' });
    expect(verdicts(run.slice(101)).every((v) => v === 'FAIL')).toBe(true);
    expect(run.at(-1)!.assessment.score!).toBeLessThan(5);
  });

  it('a server that is not MCP never PASSes and is FAIL from its second probe', () => {
    const run = runTimeline(repeat<ProbeOutcome>('not_mcp', 50));
    expect(run[0]!.assessment.verdict).toBe('UNCERTAIN');
    expect(
      run.slice(1).every((p) => p.assessment.verdict === 'FAIL' && p.assessment.reason_code === 'not_mcp'),
    ).toBe(true);
  });

  it('a server behind authorization never PASSes, alone or mixed with good probes', () => {
    const auth = runTimeline(repeat<ProbeOutcome>('auth_required', 300));
    expect(
      auth.every((p) => p.assessment.verdict === 'UNCERTAIN' && p.assessment.reason_code === 'auth_required'),
    ).toBe(true);
    const mixed = runTimeline(
      Array.from({ length: 300 }, (_, i): ProbeOutcome => (i % 2 ? 'auth_required' : 'up')),
    );
    expect(
      mixed
        .filter((p) => p.input.latestProbe!.outcome === 'auth_required')
        .every((p) => p.assessment.verdict !== 'PASS'),
    ).toBe(true);
  });

  it('one lost probe costs one interval of UNCERTAIN, not the PASS', () => {
    const run = runTimeline([...repeat<ProbeOutcome>('up', 200), 'down', ...repeat<ProbeOutcome>('up', 10)]);
    expect(verdicts(run.slice(199))).toEqual(['PASS', 'UNCERTAIN', ...repeat('PASS', 10)]);
  });

  it('a recovered server PASSes again once its outage leaves the window', () => {
    const run = runTimeline([
      ...repeat<ProbeOutcome>('up', 288),
      ...repeat<ProbeOutcome>('down', 12),
      ...repeat<ProbeOutcome>('up', 300),
    ]);
    const afterRecovery = run.slice(300);
    // An hour-long outage is 4 % of the day: PASS again at the first good probe.
    expect(afterRecovery[0]!.assessment.verdict).toBe('PASS');
    const long = runTimeline([
      ...repeat<ProbeOutcome>('up', 288),
      ...repeat<ProbeOutcome>('down', 72),
      ...repeat<ProbeOutcome>('up', 300),
    ]);
    const recovered = long.slice(360);
    expect(recovered[0]!.assessment.verdict).toBe('FAIL'); // 25 % of the day down
    expect(recovered.at(-1)!.assessment.verdict).toBe('PASS'); // the outage has left the window
  });

  it('a slow server scores below a fast one on the same probes', () => {
    const fast = runTimeline(repeat('up', 50)).at(-1)!.assessment;
    const slow = runTimeline(repeat({ outcome: 'up' as const, latencyMs: 5000 }, 50)).at(-1)!.assessment;
    expect(slow.components.latency!.value).toBe(0);
    expect(slow.score!).toBeLessThan(fast.score!);
  });
});
