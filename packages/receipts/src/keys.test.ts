import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from './key-store.ts';
import { generateSigningKey, loadSigningKeys, rotateKey, storedKeyFromPrivateJwk } from './keys.ts';

describe('signing keys', () => {
  it('makes Ed25519 keys whose kid is the RFC 7638 thumbprint', async () => {
    const key = await generateSigningKey(new Date('2026-05-01T00:00:00Z'));
    expect(key.private_jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(typeof key.private_jwk.d).toBe('string');
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: key.public_jwk.x }));
    expect(key.public_jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: key.private_jwk.x,
      kid: key.kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    expect(key.retired_at).toBeNull();
  });

  it('refuses a JWK whose x does not belong to its d, or that is not Ed25519', async () => {
    const a = await exportJWK(
      (await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })).privateKey,
    );
    const b = await exportJWK(
      (await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })).privateKey,
    );
    await expect(storedKeyFromPrivateJwk({ ...a, x: b.x })).rejects.toThrow('does not match');
    await expect(storedKeyFromPrivateJwk({ ...a, crv: 'X25519' })).rejects.toThrow('private Ed25519 JWK');
    await expect(storedKeyFromPrivateJwk({ kty: 'OKP', crv: 'Ed25519', x: a.x })).rejects.toThrow(
      'private Ed25519',
    );
  });

  it('generates a key once, then reuses it', async () => {
    const store = new MemoryKeyStore();
    const first = await loadSigningKeys({ store });
    const second = await loadSigningKeys({ store });
    expect(second.kid).toBe(first.kid);
    expect(await store.list()).toHaveLength(1);
  });

  it('lets processes racing to create the first key converge on one', async () => {
    const store = new MemoryKeyStore();
    const rings = await Promise.all([1, 2, 3].map(() => loadSigningKeys({ store })));
    expect(new Set(rings.map((ring) => ring.kid)).size).toBe(1);
    const keys = await store.list();
    expect(keys).toHaveLength(3); // all three saw an empty store and generated a key
    expect(keys.filter((key) => key.retired_at === null).map((key) => key.kid)).toEqual([rings[0]!.kid]);
  });

  it('signs with RECEIPT_SIGNING_JWK when given, still publishing the stored keys', async () => {
    const store = new MemoryKeyStore();
    const stored = await loadSigningKeys({ store });
    const envKey = await exportJWK(
      (await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })).privateKey,
    );
    const ring = await loadSigningKeys({ store, envJwk: JSON.stringify(envKey) });
    expect(ring.kid).toBe(await calculateJwkThumbprint(envKey));
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([ring.kid, stored.kid]);
    expect(await store.list()).toHaveLength(1); // the env key is not written to the store
  });

  it('explains a bad RECEIPT_SIGNING_JWK without echoing it', async () => {
    const store = new MemoryKeyStore();
    await expect(loadSigningKeys({ store, envJwk: '{"kty":"OKP",' })).rejects.toThrow(
      'RECEIPT_SIGNING_JWK is not valid JSON',
    );
    const secret = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';
    const error = await loadSigningKeys({
      store,
      envJwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: secret.slice(0, 10) }),
    }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^RECEIPT_SIGNING_JWK: /);
    expect((error as Error).message).not.toContain(secret.slice(0, 10));
  });

  it('publishes public keys only', async () => {
    const ring = await loadSigningKeys({ store: new MemoryKeyStore() });
    const jwks = ring.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(Object.keys(jwks.keys[0]!).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(JSON.stringify(jwks)).not.toContain('"d"');
  });

  it('rotates: the new key signs, the old one is retired but stays published', async () => {
    const store = new MemoryKeyStore();
    const ring = await loadSigningKeys({ store });
    const oldKid = ring.kid;
    const fresh = await rotateKey(store, new Date('2026-06-01T00:00:00Z'));
    expect(ring.kid).toBe(oldKid); // until refreshed
    await ring.refresh();
    expect(ring.kid).toBe(fresh.kid);
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([fresh.kid, oldKid]);
    const retired = (await store.list()).find((k) => k.kid === oldKid);
    expect(retired?.retired_at).toEqual(new Date('2026-06-01T00:00:00Z'));
    // A process starting after the rotation picks the new key too.
    expect((await loadSigningKeys({ store })).kid).toBe(fresh.kid);
  });

  it('leaves exactly one active key when two rotations run at once', async () => {
    const store = new MemoryKeyStore();
    await loadSigningKeys({ store });
    const [a, b] = await Promise.all([rotateKey(store), rotateKey(store)]);
    const active = (await store.list()).filter((key) => key.retired_at === null).map((key) => key.kid);
    expect(active).toHaveLength(1);
    expect([a!.kid, b!.kid]).toContain(active[0]);
    expect(await store.list()).toHaveLength(3);
  });

  it('keeps signing with its key if every stored key is retired by hand', async () => {
    const store = new MemoryKeyStore();
    const ring = await loadSigningKeys({ store });
    const kid = ring.kid;
    await store.retire(kid, new Date());
    await ring.refresh();
    expect(ring.kid).toBe(kid);
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([kid]);
  });
});
