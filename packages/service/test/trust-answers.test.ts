import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
