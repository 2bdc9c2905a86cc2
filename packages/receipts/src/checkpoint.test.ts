import { compactVerify, createLocalJWKSet } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  auditAgainstCheckpoint,
  type Checkpoint,
  signCheckpoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
} from './checkpoint.ts';
import { MemoryKeyStore } from './key-store.ts';
import { type KeyRing, loadSigningKeys } from './keys.ts';
import { leafHash, toHex } from './merkle.ts';
import { MerkleLog } from './merkle-log.ts';
import { MemoryNodeStore } from './node-store.ts';
import { RECEIPT_TYP } from './receipt.ts';

const LOG_ID = 'https://observatory.example/audit';
const events = Array.from({ length: 40 }, (_, i) =>
  JSON.stringify({ seq: i, kind: 'trust_query', server: `s${i % 7}` }),
);

let ring: KeyRing;
let log: MerkleLog;
let at25: Checkpoint;
let at40: Checkpoint;

beforeAll(async () => {
  ring = await loadSigningKeys({ store: new MemoryKeyStore() });
  log = new MerkleLog(new MemoryNodeStore());
  await log.appendData(events.slice(0, 25));
  at25 = signCheckpoint(ring, { log_id: LOG_ID, tree_size: 25, root_hash: await log.root() }).checkpoint;
  await log.appendData(events.slice(25));
  at40 = signCheckpoint(ring, { log_id: LOG_ID, tree_size: 40, root_hash: await log.root() }).checkpoint;
});

describe('checkpoints', () => {
  it('are JWS that verify with jose and round-trip their fields', async () => {
    const now = new Date('2026-05-31T12:00:00.000Z');
    const signed = signCheckpoint(ring, { log_id: LOG_ID, tree_size: 40, root_hash: at40.root_hash }, now);
    expect(signed.checkpoint).toEqual({
      log_id: LOG_ID,
      tree_size: 40,
      root_hash: at40.root_hash,
      issued_at: now.toISOString(),
    });
    const { protectedHeader } = await compactVerify(signed.jws, createLocalJWKSet(ring.jwks()));
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: ring.kid, typ: 'observatory-checkpoint+jwt' });
    expect(await verifyCheckpoint(signed.jws, ring.jwks())).toMatchObject({
      valid: true,
      checkpoint: signed.checkpoint,
    });
  });

  it('refuses a receipt offered as a checkpoint, and a malformed root', async () => {
    const receiptLike = ring.sign(RECEIPT_TYP, at40);
    expect(await verifyCheckpoint(receiptLike, ring.jwks())).toMatchObject({
      valid: false,
      reason: 'wrong_typ',
    });
    const badRoot = ring.sign('observatory-checkpoint+jwt', { ...at40, root_hash: 'AB'.repeat(32) });
    expect(await verifyCheckpoint(badRoot, ring.jwks())).toMatchObject({
      valid: false,
      reason: 'invalid_claims',
    });
    expect(() => signCheckpoint(ring, { log_id: LOG_ID, tree_size: -1, root_hash: at40.root_hash })).toThrow(
      'tree_size',
    );
  });
});

describe('verifyInclusion', () => {
  it('accepts every leaf, by data or by leaf hash, against both checkpoints', async () => {
    for (const checkpoint of [at25, at40]) {
      for (let i = 0; i < checkpoint.tree_size; i++) {
        const proof = await log.inclusionProof(i, checkpoint.tree_size);
        expect(verifyInclusion({ data: events[i]! }, i, proof, checkpoint)).toEqual({ valid: true });
        expect(verifyInclusion({ leaf_hash: toHex(leafHash(events[i]!)) }, i, proof, checkpoint)).toEqual({
          valid: true,
        });
      }
    }
  });

  it('says why a proof fails', async () => {
    const proof = await log.inclusionProof(7, 40);
    const edited = events[7]!.replace('trust_query', 'report');
    const check = (leaf: string, index: number, path: string[], cp = at40) =>
      verifyInclusion({ data: leaf }, index, path, cp);
    expect(check(edited, 7, proof)).toMatchObject({ valid: false, reason: 'root_mismatch' });
    expect(check(events[7]!, 8, await log.inclusionProof(7, 40))).toMatchObject({
      valid: false,
      reason: 'root_mismatch',
    });
    expect(check(events[7]!, 7, proof.slice(1))).toMatchObject({
      valid: false,
      reason: 'wrong_proof_length',
    });
    expect(check(events[7]!, 40, proof)).toMatchObject({ valid: false, reason: 'index_out_of_range' });
    expect(check(events[7]!, 7, [...proof.slice(1), 'zz'])).toMatchObject({
      valid: false,
      reason: 'bad_encoding',
    });
    expect(check(events[7]!, 7, proof, at25)).toMatchObject({ valid: false });
  });
});

describe('verifyConsistency', () => {
  it('accepts a log that only grew', async () => {
    expect(verifyConsistency(at25, at40, await log.consistencyProof(25, 40))).toEqual({ valid: true });
    expect(verifyConsistency(at40, at40, [])).toEqual({ valid: true });
    const empty: Checkpoint = { ...at25, tree_size: 0, root_hash: await log.root(0) };
    expect(verifyConsistency(empty, at40, [])).toEqual({ valid: true });
  });

  it('catches a rewritten history, a shrunken log and a different log', async () => {
    const forked = new MerkleLog(new MemoryNodeStore());
    await forked.appendData([...events.slice(0, 24), 'rewritten', ...events.slice(25)]);
    const forkedAt40: Checkpoint = { ...at40, root_hash: await forked.root() };
    expect(verifyConsistency(at25, forkedAt40, await forked.consistencyProof(25, 40))).toMatchObject({
      valid: false,
      reason: 'root_mismatch',
    });
    expect(verifyConsistency(at40, at25, [])).toMatchObject({ valid: false, reason: 'size_decreased' });
    expect(verifyConsistency(at25, { ...at40, log_id: 'other' }, [])).toMatchObject({
      valid: false,
      reason: 'different_log',
    });
    expect(verifyConsistency(at25, at40, [])).toMatchObject({ valid: false, reason: 'wrong_proof_length' });
  });
});

describe('auditAgainstCheckpoint', () => {
  const batchesOf = (rows: string[], size = 6) =>
    (async function* () {
      for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
    })();

  it('passes when the stored rows hash to the checkpoint, even after the log grew', async () => {
    expect(await auditAgainstCheckpoint(batchesOf(events), at40)).toMatchObject({ valid: true });
    expect(await auditAgainstCheckpoint(batchesOf(events), at25)).toMatchObject({
      valid: true,
      recomputed: { tree_size: 25, root_hash: at25.root_hash },
    });
  });

  it('catches an edited, a deleted, an inserted and a reordered row', async () => {
    const edited = events.map((e, i) => (i === 3 ? e.replace('s3', 's4') : e));
    const deleted = events.filter((_, i) => i !== 3);
    const inserted = [...events.slice(0, 3), 'forged', ...events.slice(3)];
    const reordered = [events[1]!, events[0]!, ...events.slice(2)];
    for (const rows of [edited, inserted, reordered]) {
      expect(await auditAgainstCheckpoint(batchesOf(rows), at40)).toMatchObject({
        valid: false,
        reason: 'root_mismatch',
      });
    }
    expect(await auditAgainstCheckpoint(batchesOf(deleted), at40)).toMatchObject({
      valid: false,
      reason: 'missing_leaves',
      recomputed: { tree_size: 39 },
    });
    expect(await auditAgainstCheckpoint(batchesOf(deleted), at25)).toMatchObject({
      valid: false,
      reason: 'root_mismatch',
    });
  });
});
