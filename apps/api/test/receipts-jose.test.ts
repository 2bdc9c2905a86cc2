import { rotateKey } from '@observatory/receipts';
import { keyStoreFor } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import type { FastifyInstance } from 'fastify';
// The verifier below uses jose alone: nothing of this project checks the receipt.
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';

async function verifyWithJoseOnly(jws: string, jwks: unknown) {
  const keys = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
  const { payload, protectedHeader } = await compactVerify(jws, keys, { algorithms: ['EdDSA'] });
  return { claims: JSON.parse(new TextDecoder().decode(payload)), header: protectedHeader };
}

describe.each(['postgres', 'embedded'] as const)('receipts, verified by anyone (%s)', (database) => {
  let runtime: TestRuntime;
  let app: FastifyInstance;
  let key: string;
  beforeAll(async () => {
    runtime = await createTestRuntime({ database });
    app = await buildApp(runtime, { logRequests: false });
    key = (
      await app.inject({
        method: 'POST',
        url: '/agent/auth',
        payload: { type: 'anonymous', requested_credential_type: 'api_key' },
      })
    ).json().api_key;
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  const query = async (server: string) =>
    (
      await app.inject({
        url: `/agent-query/${encodeURIComponent(server)}`,
        headers: { authorization: `Bearer ${key}` },
      })
    ).json();
  const jwks = async () => (await app.inject({ url: '/.well-known/jwks.json' })).json();

  it('verifies with jose against /.well-known/jwks.json; one flipped byte anywhere makes it invalid', async () => {
    const answer = await query('https://unknown.example/mcp');
    const { claims, header } = await verifyWithJoseOnly(answer.receipt, await jwks());
    expect(header.alg).toBe('EdDSA');
    expect(claims).toMatchObject({
      rid: answer.receipt_id,
      verdict: 'UNCERTAIN',
      sub: 'https://unknown.example/mcp',
    });
    expect(claims.log_index).toBe(answer.log_index);

    const [h, p, s] = answer.receipt.split('.') as [string, string, string];
    const flip = (part: string, i: number) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[i % bytes.length]! ^= 0x01;
      return bytes.toString('base64url');
    };
    for (const forged of [`${h}.${flip(p, 10)}.${s}`, `${h}.${p}.${flip(s, 3)}`, `${flip(h, 5)}.${p}.${s}`]) {
      await expect(verifyWithJoseOnly(forged, await jwks())).rejects.toThrow();
      const viaApi = (
        await app.inject({ method: 'POST', url: '/v1/verify-receipt', payload: { jws: forged } })
      ).json();
      expect(viaApi.valid).toBe(false);
    }
  });

  it('keeps receipts signed before a key rotation verifiable after it', async () => {
    const before = await query('https://old.example/mcp');
    const oldKid = decodeProtectedHeader(before.receipt).kid;
    await rotateKey(keyStoreFor(runtime));
    // a fresh process (or the periodic refresh) signs with the new key
    const app2 = await buildApp(runtime, { logRequests: false });
    try {
      const after = (
        await app2.inject({ url: '/agent-query/x', headers: { authorization: `Bearer ${key}` } })
      ).json();
      expect(decodeProtectedHeader(after.receipt).kid).not.toBe(oldKid);
      const keys = (await app2.inject({ url: '/.well-known/jwks.json' })).json();
      expect(keys.keys.map((k: { kid: string }) => k.kid)).toContain(oldKid);
      await expect(verifyWithJoseOnly(before.receipt, keys)).resolves.toBeTruthy();
      await expect(verifyWithJoseOnly(after.receipt, keys)).resolves.toBeTruthy();
      const check = (await app2.inject({ url: `/v1/verify-receipt?id=${before.receipt_id}` })).json();
      expect(check).toMatchObject({
        valid: true,
        signature: { valid: true, kid: oldKid },
        log: { included: true },
      });
    } finally {
      await app2.close();
    }
  });
});
