import { generateApiKey } from '@observatory/service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANONYMOUS_REQUEST,
  type ApiHarness,
  agentQueryPath,
  expectProblem,
  issueKey,
  MODES,
  startApi,
} from './api-harness.ts';

/**
 * Keys and their limits: POST /agent/auth (SPEC 2.1, 2.2, §5, §8) and the metered
 * GET /agent-query/<server> (401 without a key, 402 once the 50 checks are used, exact under
 * concurrency). Every test uses its own client address, so per-address limits never collide.
 */
describe.each(MODES)('agent keys and quotas ($mode)', ({ options }) => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi(options);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('POST /agent/auth', () => {
    it('issues the SPEC 2.1 credential for the exact SPEC 2.2 body', async () => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload: ANONYMOUS_REQUEST,
        remoteAddress: '198.51.100.10',
      });
      expect(res.statusCode).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(
        ['api_key', 'credential_expires', 'credential_type', 'scopes', 'trial_limit'].sort(),
      );
      expect(body).toMatchObject({ credential_type: 'api_key', trial_limit: 50, credential_expires: null });
      expect(body.scopes).toContain('trust:read');
      expect(body.api_key).toMatch(/^mcpt_[0-9A-Za-z]{49}$/);
    });

    it.each([
      [{ type: 'oauth', requested_credential_type: 'api_key' }, 'type', 'anonymous'],
      [{ type: 'verified_email', requested_credential_type: 'api_key' }, 'type', 'anonymous'],
      [{ type: 'anonymous', requested_credential_type: 'jwt' }, 'requested_credential_type', 'api_key'],
      [{ type: 'anonymous' }, 'requested_credential_type', 'api_key'],
      [{ requested_credential_type: 'api_key' }, 'type', 'anonymous'],
      [{ type: ['anonymous'], requested_credential_type: 'api_key' }, 'type', 'anonymous'],
      [{ type: 'ANONYMOUS', requested_credential_type: 'API_KEY' }, 'type', 'anonymous'],
    ])('refuses %j with 400 naming the allowed value', async (payload, field, allowed) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload,
        remoteAddress: '198.51.100.11',
      });
      const problem = expectProblem(res, 400);
      const errors = problem.errors as Array<{ field: string; message: string }>;
      const error = errors.find((e) => e.field === `body.${field}`);
      expect(error?.message).toContain(allowed);
    });

    it.each([
      ['text/plain', '{"type":"anonymous","requested_credential_type":"api_key"}'],
      ['application/x-www-form-urlencoded', 'type=anonymous&requested_credential_type=api_key'],
      ['multipart/form-data; boundary=x', '--x\r\n\r\nanonymous\r\n--x--'],
      [undefined, 'type=anonymous'],
    ])('refuses a %s body with 415', async (contentType, payload) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload,
        headers: contentType ? { 'content-type': contentType } : {},
        remoteAddress: '198.51.100.12',
      });
      expectProblem(res, 415);
    });

    it('gives 5 keys per hour per address: the 6th is a 429 with Retry-After; bad requests do not count', async () => {
      const from = { remoteAddress: '198.51.100.13' };
      // refused calls are not registrations
      for (let i = 0; i < 3; i++) {
        const bad = await h.app.inject({ method: 'POST', url: '/agent/auth', payload: {}, ...from });
        expect(bad.statusCode).toBe(400);
      }
      for (let i = 0; i < 5; i++) await issueKey(h.app, from.remoteAddress);
      const sixth = await h.app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload: ANONYMOUS_REQUEST,
        ...from,
      });
      const problem = expectProblem(sixth, 429);
      const retryAfter = Number(sixth.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(problem.retry_after).toBe(retryAfter);
      // another address is not affected
      await issueKey(h.app, '198.51.100.14');
    });

    it('ignores X-Forwarded-For when TRUST_PROXY is false (the default): a spoofed header buys no keys', async () => {
      const peer = '198.51.100.15';
      for (let i = 0; i < 5; i++) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/agent/auth',
          payload: ANONYMOUS_REQUEST,
          remoteAddress: peer,
          headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        });
        expect(res.statusCode).toBe(201);
      }
      const spoofed = await h.app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload: ANONYMOUS_REQUEST,
        remoteAddress: peer,
        headers: { 'x-forwarded-for': '203.0.113.99' },
      });
      expectProblem(spoofed, 429);
    });

    it('holds the per-address limit under concurrency: 20 parallel calls give exactly 5 keys', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          h.app.inject({
            method: 'POST',
            url: '/agent/auth',
            payload: ANONYMOUS_REQUEST,
            remoteAddress: '198.51.100.16',
          }),
        ),
      );
      const statuses = answers.map((a) => a.statusCode);
      expect(statuses.filter((s) => s === 201)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    });
  });

  describe('GET /agent-query/<server>', () => {
    const resourceMetadata = () => `${h.runtime.config.publicBaseUrl}/.well-known/oauth-protected-resource`;

    it.each([
      ['no Authorization header', undefined],
      ['an empty bearer', 'Bearer '],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['a made-up key', 'Bearer not-a-key'],
      ['a key with a bad checksum', `Bearer ${'mcpt_'.padEnd(54, 'A')}`],
      ['a well-formed key that was never issued', `Bearer ${generateApiKey().key}`],
    ])(
      'answers 401 with WWW-Authenticate pointing at the resource metadata for %s',
      async (_label, authorization) => {
        const res = await h.app.inject({
          url: agentQueryPath('https://mcp.example.com/mcp'),
          headers: authorization === undefined ? {} : { authorization },
        });
        expectProblem(res, 401);
        const challenge = res.headers['www-authenticate'] as string;
        expect(challenge).toMatch(/^Bearer /);
        expect(challenge).toContain(`resource_metadata="${resourceMetadata()}"`);
      },
    );

    it('answers an unknown server with 200 UNCERTAIN, evidence "none", and a signed receipt', async () => {
      const key = await issueKey(h.app, '198.51.100.20');
      const res = await h.app.inject({
        url: agentQueryPath('https://never-seen.example.net/mcp'),
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(body).toMatchObject({
        verdict: 'UNCERTAIN',
        score: null,
        latency: { p50_ms: null, p95_ms: null },
        evidence: 'none',
        reason_code: 'agent_not_found',
        confidence: 0,
        checks_remaining: 49,
      });
      expect(Date.parse(body.checked_at)).not.toBeNaN();
      expect(body.receipt_id).toMatch(/^rcpt_/);
      expect(body.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const verified = await h.app.inject({ url: `/v1/verify-receipt?id=${body.receipt_id}` });
      expect(verified.json().valid).toBe(true);
    });

    it('counts down 50 checks, then answers 402 with a link to /get-started', async () => {
      const key = await issueKey(h.app, '198.51.100.21');
      const remaining: number[] = [];
      for (let i = 0; i < 50; i++) {
        const res = await h.app.inject({
          url: agentQueryPath(`server-${i}`),
          headers: { authorization: `Bearer ${key}` },
        });
        expect(res.statusCode).toBe(200);
        remaining.push(res.json().checks_remaining);
      }
      expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
      const res = await h.app.inject({
        url: agentQueryPath('server-51'),
        headers: { authorization: `Bearer ${key}` },
      });
      const problem = expectProblem(res, 402);
      const getStarted = `${h.runtime.config.publicBaseUrl}/get-started`;
      expect(res.headers.link).toContain(`<${getStarted}>`);
      expect(problem.detail).toContain('/get-started');
      expect(problem.checks_remaining).toBe(0);
    });

    it('answers 200 concurrent calls on a fresh key with exactly 50 verdicts and 150 × 402', async () => {
      const key = await issueKey(h.app, '198.51.100.22');
      const receiptsBefore = await receiptsCount();
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          h.app.inject({ url: agentQueryPath(`race-${i}`), headers: { authorization: `Bearer ${key}` } }),
        ),
      );
      const ok = answers.filter((a) => a.statusCode === 200);
      const paymentRequired = answers.filter((a) => a.statusCode === 402);
      expect(ok).toHaveLength(50);
      expect(paymentRequired).toHaveLength(150);
      // every check was handed out exactly once
      expect(ok.map((a) => a.json().checks_remaining).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i),
      );
      // a receipt for each verdict given, none for a refusal
      expect((await receiptsCount()) - receiptsBefore).toBe(50);
      // and each logged, in the transaction that used its check, at the index it was signed with
      const logged = await h.runtime.db.sql<{ idx: number; receipt_id: string }[]>`
        SELECT e.idx, e.receipt_id FROM audit_events e JOIN api_keys k ON k.id = e.key_id
        WHERE e.event_type = 'agent_query' AND k.used = 50 AND k.trial_limit = 50
          AND e.receipt_id = ANY(${ok.map((a) => a.json().receipt_id as string)})`;
      expect(new Map(logged.map((e) => [e.receipt_id, e.idx]))).toEqual(
        new Map(ok.map((a) => [a.json().receipt_id as string, a.json().log_index as number])),
      );
      // and stored as sent, with the kid of the key that signed it
      const stored = await h.runtime.db.sql<{ id: string; jws: string; kid: string }[]>`
        SELECT id, jws, kid FROM receipts WHERE id = ANY(${ok.map((a) => a.json().receipt_id as string)})`;
      expect(new Map(stored.map((r) => [r.id, r.jws]))).toEqual(
        new Map(ok.map((a) => [a.json().receipt_id as string, a.json().receipt as string])),
      );
      for (const r of stored) {
        const header = JSON.parse(Buffer.from(r.jws.split('.')[0]!, 'base64url').toString()) as {
          kid: string;
        };
        expect(r.kid).toBe(header.kid);
      }
    });

    async function receiptsCount(): Promise<number> {
      const [row] = await h.runtime.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM receipts`;
      return row!.n;
    }
  });
});

/**
 * Which address a key is counted against is a deployment choice (TRUST_PROXY). It is decided by
 * Fastify before any storage is touched, so one mode is enough here.
 */
describe('TRUST_PROXY decides the client address of the key limit', () => {
  const auth = (h: ApiHarness, remoteAddress: string, forwardedFor: string) =>
    h.app.inject({
      method: 'POST',
      url: '/agent/auth',
      payload: ANONYMOUS_REQUEST,
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('TRUST_PROXY=true counts per X-Forwarded-For client', async () => {
    const h = await startApi({ database: 'postgres', redis: true, env: { TRUST_PROXY: 'true' } });
    try {
      for (let i = 0; i < 5; i++) expect((await auth(h, '10.0.0.2', '203.0.113.7')).statusCode).toBe(201);
      expectProblem(await auth(h, '10.0.0.2', '203.0.113.7'), 429);
      // the same proxy, another client behind it
      expect((await auth(h, '10.0.0.2', '203.0.113.8')).statusCode).toBe(201);
    } finally {
      await h.close();
    }
  });

  it('TRUST_PROXY=<addresses> believes X-Forwarded-For only from those proxies', async () => {
    const h = await startApi({ database: 'postgres', redis: true, env: { TRUST_PROXY: '10.0.0.0/8' } });
    try {
      // through the trusted proxy: counted per client
      for (let i = 0; i < 5; i++) expect((await auth(h, '10.1.2.3', '203.0.113.9')).statusCode).toBe(201);
      expectProblem(await auth(h, '10.1.2.3', '203.0.113.9'), 429);
      expect((await auth(h, '10.1.2.3', '203.0.113.10')).statusCode).toBe(201);
      // straight from the internet: the header is ignored, the peer is counted
      for (let i = 0; i < 5; i++)
        expect((await auth(h, '192.0.2.50', `203.0.113.${20 + i}`)).statusCode).toBe(201);
      expectProblem(await auth(h, '192.0.2.50', '203.0.113.99'), 429);
    } finally {
      await h.close();
    }
  });
});
