import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServices, type Services } from '../src/services.ts';
import { createTestRuntime, type TestRuntime } from '../src/testing.ts';

/**
 * The /api/trust and check_trust answer is made once per server and shared for up to a second:
 * the asks arriving together share one lookup and one answer, and a server nobody tracked is
 * looked up again at every ask, so that registering it shows at once.
 */
describe('trust answers', () => {
  let runtime: TestRuntime;
  let services: Services;
  const TRACKED = 'http://127.0.0.1:9/answers';

  beforeAll(async () => {
    runtime = await createTestRuntime();
    services = await createServices(runtime);
    await services.reports.ingest({ server_url: TRACKED, success: true, latency_ms: 90 }, {});
  });
  afterAll(async () => {
    await runtime?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the asks arriving together one answer, with its JSON text, reusable for a second at most', async () => {
    expect(services.trust.readyAnswer(TRACKED)).toBeUndefined();
    const before = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => services.trust.trustAnswer(TRACKED)));
    const [first] = answers;
    for (const answer of answers) expect(answer).toBe(first);
    expect(first!.body).toMatchObject({ found: true, server_url: TRACKED });
    expect(first!.json).toBe(JSON.stringify(first!.body));
    expect(first!.reusableUntil).toBeGreaterThan(before);
    expect(first!.reusableUntil).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(services.trust.readyAnswer(TRACKED)).toBe(first);
    expect(await services.trust.checkTrust(TRACKED)).toEqual(first!.body);
  });

  it('answers an untracked server for this ask only, and finds it as soon as it is registered', async () => {
    const url = 'http://127.0.0.1:9/registered-later';
    const unknown = await services.trust.trustAnswer(url);
    expect(unknown.body).toMatchObject({
      found: false,
      server_url: url,
      trust_score: null,
      verdict: 'UNCERTAIN',
    });
    expect(unknown.reusableUntil).toBe(0);
    expect(services.trust.readyAnswer(url)).toBeUndefined();

    await services.registration.register({ server_url: url, name: 'Registered Later', category: 'data' });
    expect((await services.trust.trustAnswer(url)).body).toMatchObject({
      found: true,
      name: 'Registered Later',
    });
  });

  it('reads a row again in the last fifth of its second, so the asks at its expiry do not wait', async () => {
    const url = 'http://127.0.0.1:9/refreshed-ahead';
    await services.reports.ingest({ server_url: url, success: true, latency_ms: 40 }, {});
    // only the clock the cache reads is moved by hand; timers and I/O run as usual
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = await services.trust.trustAnswer(url);
    const expiry = first.reusableUntil;
    expect(expiry).toBeGreaterThan(Date.now());

    vi.setSystemTime(expiry - 100);
    expect(await services.trust.trustAnswer(url)).toBe(first);
    // the row read meanwhile (at expiry - 100) gives the next answer
    await vi.waitFor(async () =>
      expect((await services.trust.trustAnswer(url)).reusableUntil).toBe(expiry + 900),
    );

    vi.setSystemTime(expiry + 100);
    expect(services.trust.readyAnswer(url)?.reusableUntil).toBe(expiry + 900);
  });
  it("gives /agent-query the cached answer's verdict, sharing its parts within the second", async () => {
    const url = 'http://127.0.0.1:9/agent-queried';
    await services.reports.ingest({ server_url: url, success: true, latency_ms: 70 }, {});
    const { api_key } = await services.agentKeys.issueAnonymousKey('198.51.100.7');
    const bearer = `Bearer ${api_key}`;
    const answers = await Promise.all([
      services.trust.agentQuery(url, bearer),
      services.trust.agentQuery(` ${url} `, bearer),
    ]);
    // the JSON text sent is the answer's, field for field and in order
    for (const { body, json } of answers) expect(json).toBe(JSON.stringify(body));
    const [a, b] = answers.map((answer) => answer.body);
    const { body } = await services.trust.trustAnswer(url);
    if (!body.found) throw new Error('the reported server is tracked');
    for (const answer of [a!, b!]) {
      expect(answer).toMatchObject({
        server: { url, name: body.name, slug: body.slug, category: body.category },
        verdict: body.verdict,
        score: body.trust_score,
        latency: { p50_ms: body.metrics.p50_latency_ms, p95_ms: body.metrics.p95_latency_ms },
        evidence: body.evidence,
        reason_code: body.reason_code,
        reason: body.reason,
        confidence: body.confidence,
      });
    }
    // made once from the cached row: the second ask got the same objects, its own receipt
    expect(b!.server).toBe(a!.server);
    expect(b!.latency).toBe(a!.latency);
    expect(b!.receipt_id).not.toBe(a!.receipt_id);

    const { body: untracked, json } = await services.trust.agentQuery(
      'http://127.0.0.1:9/agent-queried-later',
      bearer,
    );
    expect(json).toBe(JSON.stringify(untracked));
    expect(untracked).toMatchObject({
      server: null,
      verdict: 'UNCERTAIN',
      score: null,
      latency: { p50_ms: null, p95_ms: null },
      evidence: 'none',
      reason_code: 'agent_not_found',
      confidence: 0,
    });
    const claims = JSON.parse(Buffer.from(untracked.receipt.split('.')[1]!, 'base64url').toString());
    expect(claims.evidence).toEqual({
      kind: 'none',
      window: {
        from: new Date(Date.parse(untracked.checked_at) - 86_400_000).toISOString(),
        to: untracked.checked_at,
      },
      probes: 0,
      reports: 0,
    });
  });
});
