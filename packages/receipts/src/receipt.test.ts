import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_TYP, signCheckpoint } from './checkpoint.ts';
import { type Jwks, MemoryKeyStore } from './key-store.ts';
import { type KeyRing, loadSigningKeys, rotateKey } from './keys.ts';
import { RECEIPT_TYP, type ReceiptInput, signReceipt, signReceipts, verifyReceipt } from './receipt.ts';
import { newReceiptId, RECEIPT_ID_PATTERN, receiptIdTime } from './receipt-id.ts';
import { type Signer, SigningPool, SigningWorker, SODIUM_NATIVE_PATH } from './signing-worker.ts';

const input: ReceiptInput = {
  iss: 'https://observatory.example',
  sub: 'https://mcp.weather.example/mcp',
  verdict: 'PASS',
  score: 87.5,
  latency: { p50_ms: 120, p95_ms: 340 },
  evidence: {
    window: { from: '2026-05-01T00:00:00Z', to: '2026-05-31T00:00:00Z' },
    probes: 8640,
    reports: 12,
  },
};

/**
 * What a third party does with nothing but the JWKS document (as served, JSON text) and jose:
 * this helper uses jose only. Returns the header and claims, or the jose error code.
 */
async function verifyWithJoseOnly(jws: string, jwksJson: string) {
  try {
    const { payload, protectedHeader } = await jose.jwtVerify(
      jws,
      jose.createLocalJWKSet(JSON.parse(jwksJson)),
      {
        algorithms: ['EdDSA'],
        typ: 'observatory-receipt+jwt',
      },
    );
    return { payload, protectedHeader };
  } catch (error) {
    return { code: (error as jose.errors.JOSEError).code };
  }
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const unb64 = (text: string) => Buffer.from(text, 'base64url');

/** Flips one bit of one byte of a decoded JWS part and re-encodes it. */
function flipByte(jws: string, part: 1 | 2, at: number): string {
  const parts = jws.split('.');
  const bytes = unb64(parts[part]!);
  bytes[at]! ^= 0x01;
  parts[part] = b64(bytes);
  return parts.join('.');
}

async function newRing(): Promise<KeyRing> {
  return loadSigningKeys({ store: new MemoryKeyStore() });
}

describe('signReceipt', () => {
  it('makes a compact JWS that jose alone verifies against the JWKS', async () => {
    const ring = await newRing();
    const now = Date.parse('2026-05-31T12:00:00Z');
    const receipt = signReceipt(ring, { ...input, log_index: 42 }, now);

    expect(receipt.id).toMatch(RECEIPT_ID_PATTERN);
    expect(receipt.kid).toBe(ring.kid);
    const verified = await verifyWithJoseOnly(receipt.jws, JSON.stringify(ring.jwks()));
    expect(verified).toEqual({
      protectedHeader: { alg: 'EdDSA', kid: ring.kid, typ: 'observatory-receipt+jwt' },
      payload: { rid: receipt.id, iat: now / 1000, ...input, log_index: 42 },
    });
    // Also through the lower-level compact API.
    const { payload } = await jose.compactVerify(receipt.jws, jose.createLocalJWKSet(ring.jwks()));
    expect(JSON.parse(new TextDecoder().decode(payload)).rid).toBe(receipt.id);
  });

  it('is invalidated by one flipped byte in the payload or in the signature', async () => {
    const ring = await newRing();
    const { jws } = signReceipt(ring, input);
    for (const forged of [flipByte(jws, 1, 10), flipByte(jws, 2, 0), flipByte(jws, 2, 63)]) {
      expect(await verifyWithJoseOnly(forged, JSON.stringify(ring.jwks()))).toEqual({
        code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      });
      expect(await verifyReceipt(forged, ring.jwks())).toMatchObject({
        valid: false,
        reason: 'bad_signature',
        claims: null,
      });
    }
  });

  it('refuses claims it would not accept on verification', async () => {
    const ring = await newRing();
    expect(() => signReceipt(ring, { ...input, verdict: 'MAYBE' as 'PASS' })).toThrow('verdict');
    expect(() => signReceipt(ring, { ...input, score: Number.NaN })).toThrow('score');
  });
});

/** A signing thread's program that exits with `code` on its first message (a fatal error). */
const dyingOnFirstMessage = (code: number) =>
  `require('node:worker_threads').parentPort.on('message', () => process.exit(${code}));`;

/**
 * Signs `count` receipts through `signer` and checks they are the bytes signReceipt makes on the
 * main thread (Ed25519 is deterministic: same claims and key, same signature); returns them.
 */
async function expectSameAsMainThread(ring: KeyRing, signer: Signer, count: number) {
  const inputs = Array.from({ length: count }, (_, i) => ({
    ...input,
    log_index: i,
    rid: newReceiptId(1e12 + i),
  }));
  const batch = await signReceipts(ring, inputs, signer, 1_700_000_000_000);
  expect(batch.map((r) => r.jws)).toEqual(inputs.map((i) => signReceipt(ring, i, 1_700_000_000_000).jws));
  return batch;
}

describe('signReceipts (on the signing worker)', () => {
  it('makes the receipts signReceipt makes, and starts a new worker after one was closed', async () => {
    const ring = await newRing();
    const worker = new SigningWorker();
    try {
      const batch = await expectSameAsMainThread(ring, worker, 25);
      for (const r of batch) expect(await verifyReceipt(r.jws, ring.jwks())).toMatchObject({ valid: true });

      await worker.close();
      const [again] = await signReceipts(ring, [input], worker);
      expect(await verifyReceipt(again!.jws, ring.jwks())).toMatchObject({ valid: true });
      expect(await signReceipts(ring, [], worker)).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it('signs with libsodium where it loads, and with node:crypto otherwise: the same bytes', async () => {
    const ring = await newRing();
    const signers = {
      libsodium: new SigningWorker(undefined, SODIUM_NATIVE_PATH),
      'node:crypto': new SigningWorker(undefined, null),
      'a library that does not load': new SigningWorker(undefined, '/nonexistent/sodium-native'),
    };
    try {
      expect(SODIUM_NATIVE_PATH).not.toBeNull();
      for (const signer of Object.values(signers)) await expectSameAsMainThread(ring, signer, 20);
      expect(Object.fromEntries(Object.entries(signers).map(([name, s]) => [name, s.native]))).toEqual({
        libsodium: true,
        'node:crypto': false,
        'a library that does not load': false,
      });
    } finally {
      await Promise.all(Object.values(signers).map((s) => s.close()));
    }
  });

  it('signs with the key of each call when keys change between calls (a rotation)', async () => {
    const [a, b] = [await newRing(), await newRing()];
    const worker = new SigningWorker();
    try {
      for (const ring of [a, b, a, b]) {
        const [r] = await signReceipts(ring, [input], worker);
        expect(await verifyReceipt(r!.jws, ring.jwks())).toMatchObject({ valid: true });
      }
    } finally {
      await worker.close();
    }
  });

  it('refuses the signatures in hand when stopped, and signs again after', async () => {
    const ring = await newRing();
    const worker = new SigningWorker();
    try {
      // closed in the same tick as the ask: the new worker has not even started to sign
      const inHand = signReceipts(ring, [input, input], worker);
      await worker.close();
      await expect(inHand).rejects.toThrow(/closed/);
      const [after] = await signReceipts(ring, [input], worker);
      expect(await verifyReceipt(after!.jws, ring.jwks())).toMatchObject({ valid: true });
    } finally {
      await worker.close();
    }
  });

  it('refuses what was in hand when the worker thread dies, and starts a new one for the next call', async () => {
    const ring = await newRing();
    // a worker that dies on its first message, as one would on a fatal error in OpenSSL
    const worker = new SigningWorker(dyingOnFirstMessage(7));
    try {
      await expect(signReceipts(ring, [input, input], worker)).rejects.toThrow(/signing worker exited \(7\)/);
      // a call after the crash goes to a new thread (it dies too), instead of waiting forever on
      // the dead one
      await expect(signReceipts(ring, [input], worker)).rejects.toThrow(/exited \(7\)/);
    } finally {
      await worker.close();
    }
  });

  it('refuses what it cannot sign instead of hanging', async () => {
    const worker = new SigningWorker();
    try {
      const { publicKey } = await import('node:crypto').then((c) => c.generateKeyPairSync('ed25519'));
      await expect(worker.sign(publicKey, ['x'])).rejects.toThrow(/signing failed/);
    } finally {
      await worker.close();
    }
  });
});

describe('SigningPool', () => {
  it('signs a batch split over its threads exactly as one thread does, in order', async () => {
    const ring = await newRing();
    const pool = new SigningPool(3);
    try {
      // below 16 the batch goes to one thread; from 16 on it is split
      for (const count of [1, 7, 16, 25, 49]) await expectSameAsMainThread(ring, pool, count);
    } finally {
      await pool.close();
    }
  });

  it('refuses the whole batch when one of its threads dies, and signs again after', async () => {
    const ring = await newRing();
    // every thread dies on its first message: a split batch fails as a whole, not half-signed
    const dying = new SigningPool(2, dyingOnFirstMessage(9));
    try {
      const inputs = Array.from({ length: 20 }, () => input);
      await expect(signReceipts(ring, inputs, dying)).rejects.toThrow(/exited \(9\)/);
    } finally {
      await dying.close();
    }
    const pool = new SigningPool(2);
    try {
      const inHand = signReceipts(
        ring,
        Array.from({ length: 20 }, () => input),
        pool,
      );
      // observed before the close: the refusal comes while close() still waits on the other thread
      const refused = expect(inHand).rejects.toThrow(/closed/);
      await pool.close();
      await refused;
      const [after] = await signReceipts(ring, [input], pool);
      expect(await verifyReceipt(after!.jws, ring.jwks())).toMatchObject({ valid: true });
    } finally {
      await pool.close();
    }
  });
});

describe('verifyReceipt', () => {
  it('returns the header and claims of a valid receipt', async () => {
    const ring = await newRing();
    const receipt = signReceipt(ring, { ...input, score: null, verdict: 'UNCERTAIN' });
    expect(await verifyReceipt(receipt.jws, ring.jwks())).toEqual({
      valid: true,
      header: { alg: 'EdDSA', kid: ring.kid, typ: RECEIPT_TYP },
      claims: receipt.claims,
    });
  });

  it('verifies a receipt that jose CompactSign produced (same format both ways)', async () => {
    const store = new MemoryKeyStore();
    const ring = await loadSigningKeys({ store });
    const [stored] = await store.list();
    const claims = signReceipt(ring, input).claims;
    const jws = await new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'EdDSA', kid: ring.kid, typ: RECEIPT_TYP })
      .sign(await jose.importJWK(stored!.private_jwk, 'EdDSA'));
    expect(await verifyReceipt(jws, ring.jwks())).toMatchObject({ valid: true, claims });
  });

  it('still verifies a receipt signed before a key rotation', async () => {
    const store = new MemoryKeyStore();
    const ring = await loadSigningKeys({ store });
    const before = signReceipt(ring, input);
    await rotateKey(store);
    await ring.refresh();
    const after = signReceipt(ring, input);
    expect(after.kid).not.toBe(before.kid);
    for (const { jws } of [before, after]) {
      expect((await verifyReceipt(jws, ring.jwks())).valid).toBe(true);
      expect(await verifyWithJoseOnly(jws, JSON.stringify(ring.jwks()))).toHaveProperty('payload');
    }
  });

  it('gives a reason for each kind of failure', async () => {
    const ring = await newRing();
    const other = await newRing();
    const { jws } = signReceipt(ring, input);
    const [, payload, signature] = jws.split('.');
    const header = (h: object) => b64(Buffer.from(JSON.stringify(h)));

    const cases: Array<[string, string, Jwks]> = [
      ['malformed', 'not-a-jws', ring.jwks()],
      ['malformed', `%%%.${payload}.${signature}`, ring.jwks()],
      ['malformed', `${header({ alg: 'EdDSA', typ: RECEIPT_TYP })}.${payload}.${signature}`, ring.jwks()],
      ['unknown_kid', jws, other.jwks()],
      ['wrong_alg', `${header({ alg: 'none', kid: ring.kid, typ: RECEIPT_TYP })}.${payload}.`, ring.jwks()],
      [
        'wrong_alg',
        `${header({ alg: 'HS256', kid: ring.kid, typ: RECEIPT_TYP })}.${payload}.${signature}`,
        ring.jwks(),
      ],
      [
        'wrong_typ',
        signCheckpoint(ring, { log_id: 'l', tree_size: 0, root_hash: '0'.repeat(64) }).jws,
        ring.jwks(),
      ],
      [
        'bad_signature',
        `${jws.split('.').slice(0, 2).join('.')}.${other.sign(RECEIPT_TYP, {}).split('.')[2]}`,
        ring.jwks(),
      ],
      [
        'invalid_claims',
        ring.sign(RECEIPT_TYP, { ...signReceipt(ring, input).claims, verdict: 'MAYBE' }),
        ring.jwks(),
      ],
      ['invalid_claims', ring.sign(RECEIPT_TYP, [1, 2, 3]), ring.jwks()],
    ];
    for (const [reason, token, jwks] of cases) {
      const result = await verifyReceipt(token, jwks);
      expect(result, `${reason}: ${token.slice(0, 40)}`).toMatchObject({
        valid: false,
        reason,
        claims: null,
      });
    }
    expect(CHECKPOINT_TYP).not.toBe(RECEIPT_TYP);
  });
});

describe('receipt ids', () => {
  it('are ULIDs that sort by issue time and decode back to it', () => {
    const early = newReceiptId(Date.parse('2026-05-01T00:00:00.000Z'));
    const late = newReceiptId(Date.parse('2026-05-01T00:00:00.001Z'));
    expect(early).toMatch(RECEIPT_ID_PATTERN);
    expect(early < late).toBe(true);
    expect(receiptIdTime(early)).toEqual(new Date('2026-05-01T00:00:00.000Z'));
    expect(receiptIdTime('rcpt_nope')).toBeNull();
    const many = new Set(Array.from({ length: 2000 }, () => newReceiptId(0)));
    expect(many.size).toBe(2000);
  });
});
