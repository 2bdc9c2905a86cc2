import {
  auditAgainstCheckpoint,
  leafHash,
  loadSigningKeys,
  MemoryNodeStore,
  MerkleLog,
  rotateKey,
  signCheckpoint,
  toHex,
  verifyCheckpoint,
  verifyInclusion,
} from '@observatory/receipts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLeafData,
  auditLeafParts,
  auditRepository,
  inTransaction,
  type NewAuditEvent,
  openDatabase,
  pipelinedTransaction,
  signingKeysRepository,
} from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/test-database.ts';

const event = (n: number): NewAuditEvent => ({
  event_id: `evt_${n}`,
  event_type: 'report',
  occurred_at: new Date(Date.UTC(2026, 10, 1, 0, 0, n)),
  server_id: null,
  agent_id: `agent-${n % 3}`,
  key_id: null,
  receipt_id: null,
  payload: { success: n % 2 === 0, latency_ms: n * 1.5, tool: 'ünïcode ✓' },
});

describe('audit log in Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 6 });
  });
  afterAll(async () => db?.drop());

  it('gives concurrent appends contiguous indexes and a tree that matches the stored rows', async () => {
    const audit = auditRepository(db.sql);
    // five writers at once, each appending batches: the lock serialises them
    await Promise.all(
      [0, 1, 2, 3, 4].map(async (w) => {
        for (let b = 0; b < 4; b++)
          await audit.append(Array.from({ length: 7 }, (_, i) => event(w * 1000 + b * 10 + i)));
      }),
    );
    const size = await audit.size();
    expect(size).toBe(140);
    const idx = await db.sql<{ idx: number }[]>`SELECT idx FROM audit_events ORDER BY idx`;
    expect(idx.map((r) => r.idx)).toEqual(Array.from({ length: 140 }, (_, i) => i));

    const ring = await loadSigningKeys({ store: signingKeysRepository(db.sql) });
    const root = await audit.merkleLog().root(size);
    const signed = signCheckpoint(ring, { log_id: 'test-log', tree_size: size, root_hash: root });
    expect((await verifyCheckpoint(signed.jws, ring.jwks())).valid).toBe(true);

    const leaves = async function* () {
      for await (const batch of audit.eventBatches(size, 32)) yield batch.map(auditLeafData);
    };
    expect((await auditAgainstCheckpoint(leaves(), signed.checkpoint)).valid).toBe(true);

    // every event's inclusion proof verifies against the checkpoint
    for (const i of [0, 1, 63, 64, 139]) {
      const stored = await audit.findByIndex(i);
      const proof = await audit.merkleLog().inclusionProof(i, size);
      expect(verifyInclusion({ data: auditLeafData(stored!) }, i, proof, signed.checkpoint)).toEqual({
        valid: true,
      });
    }

    // editing a row is detected by the next consistency check and by its proof
    await db.sql`UPDATE audit_events SET payload = jsonb_set(payload, '{success}', 'true') WHERE idx = 17`;
    const edited = await auditAgainstCheckpoint(leaves(), signed.checkpoint);
    expect(edited).toMatchObject({ valid: false, reason: 'root_mismatch' });
    const tampered = await audit.findByIndex(17);
    const proof17 = await audit.merkleLog().inclusionProof(17, size);
    expect(verifyInclusion({ data: auditLeafData(tampered!) }, 17, proof17, signed.checkpoint).valid).toBe(
      false,
    );

    // deleting a row is detected too
    await db.sql`DELETE FROM audit_events WHERE idx = 90`;
    const deleted = await auditAgainstCheckpoint(leaves(), signed.checkpoint);
    expect(deleted.valid).toBe(false);
  });
});

describe('audit_append (the append done in the database)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('stores exactly the leaves and nodes the reference Merkle log in packages/receipts makes', async () => {
    const audit = auditRepository(db.sql);
    const reference = new MemoryNodeStore();
    const log = new MerkleLog(reference);
    // batch sizes that start and end on every kind of boundary: odd sizes, powers of two,
    // carries through many levels (size 63 → 64 → 128), single events, an empty batch
    let n = 0;
    // text that an array literal or JSON must escape travels intact to the database's leaf
    const tricky = (i: number): NewAuditEvent => ({
      ...event(i),
      agent_id: 'NULL',
      payload: {
        quote: '"',
        backslash: '\\ \\"',
        braces: '{a,b}',
        separator: 'a\u0001b',
        line: 'x\ny\t',
        emoji: '🚀',
        n: -0.5,
      },
    });
    for (const count of [1, 2, 3, 7, 1, 16, 33, 0, 64, 5, 1, 1, 127, 2]) {
      const events = Array.from({ length: count }, (_, i) => (i % 5 === 2 ? tricky(n + i) : event(n + i)));
      const stored = await audit.append(events);
      expect(stored.map((e) => e.idx)).toEqual(events.map((_, i) => n + i));
      await log.append(stored.map((e) => leafHash(auditLeafData(e))));
      n += count;
    }
    const rows = await db.sql<{ level: number; idx: number; hash: Buffer }[]>`
      SELECT level, idx, hash FROM audit_tree_nodes ORDER BY level, idx`;
    const expected = await reference.getNodes(rows.map((r) => ({ level: r.level, index: r.idx })));
    expect(rows.map((r) => r.hash.toString('hex'))).toEqual(
      expected.map((h) => Buffer.from(h!).toString('hex')),
    );
    // and no node the reference has is missing: complete subtrees per level = ⌊n / 2^level⌋
    let nodes = 0;
    for (let level = 0; n >> level > 0; level++) nodes += n >> level;
    expect(rows).toHaveLength(nodes);
    expect(await audit.merkleLog().root(n)).toBe(await log.root(n));
    // the rows as stored give back the very leaves that were hashed (what an auditor recomputes)
    for await (const batch of audit.eventBatches(n, 100)) {
      for (const row of batch)
        expect(toHex(leafHash(auditLeafData(row))), `idx ${row.idx}`).toBe(row.leaf_hash);
    }
    // each event's leaf_hash column is its leaf's hash, as the returned events say
    const events = await db.sql<
      { idx: number; leaf_hash: Buffer }[]
    >`SELECT idx, leaf_hash FROM audit_events ORDER BY idx`;
    const leaves = await reference.getNodes(events.map((e) => ({ level: 0, index: e.idx })));
    expect(events.map((e) => e.leaf_hash.toString('hex'))).toEqual(
      leaves.map((h) => Buffer.from(h!).toString('hex')),
    );
  });

  it('refuses mismatched arguments, and a tree with a node missing, keeping nothing', async () => {
    const audit = auditRepository(db.sql);
    await expect(db.sql`SELECT audit_append(ARRAY['a'], ARRAY[]::text[])`).rejects.toThrow(
      /1 heads but 0 tails/,
    );
    // a size ≡ 3 (mod 4): the next leaf completes a level-1 node whose level-2 parent needs its
    // stored left sibling (level 1, index (size - 3) / 2)
    while ((await audit.size()) % 4 !== 3) await audit.append([event(5_000)]);
    const size = await audit.size();
    const [lost] = await db.sql<{ hash: Buffer }[]>`
      DELETE FROM audit_tree_nodes WHERE level = 1 AND idx = ${(size - 3) / 2} RETURNING hash`;
    const count = async () =>
      (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_events`)[0]!.n;
    const events = await count();
    await expect(audit.append([event(9_000)])).rejects.toThrow(/a node below level 2 is missing/);
    expect(await count()).toBe(events);
    expect(await audit.size()).toBe(size);
    // put back, the log takes the append
    await db.sql`INSERT INTO audit_tree_nodes (level, idx, hash) VALUES (1, ${(size - 3) / 2}, ${lost!.hash})`;
    await expect(audit.append([event(9_000)])).resolves.toMatchObject([{ idx: size }]);
  });
});

describe('leaf data made before the index is known', () => {
  it('is byte for byte the leaf data of the event with its index', () => {
    const tricky: NewAuditEvent = {
      ...event(5),
      // text that looks like the index member must not be taken for it
      agent_id: '"idx":-1,"x":"\\"idx\\":-1',
      event_id: 'evt_"idx":-1',
      payload: { idx: -1, nested: { idx: '"idx":-1' }, emoji: '🚀', quote: '"' },
    };
    for (const e of [event(1), event(2), tricky]) {
      const { head, tail } = auditLeafParts(e);
      for (const idx of [0, 7, 123_456_789])
        expect(`${head}${idx}${tail}`).toBe(auditLeafData({ ...e, idx }));
    }
  });
});

describe('pipelined transactions', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 2 });
    await db.sql`CREATE TABLE pipelined (id int PRIMARY KEY)`;
  });
  afterAll(async () => db?.drop());

  const ids = async () =>
    (await db.sql<{ id: number }[]>`SELECT id FROM pipelined ORDER BY id`).map((r) => r.id);

  it('commits what the body queued, after reading what it needed in between', async () => {
    const result = await pipelinedTransaction(db.sql, async (tx) => {
      const first = tx`INSERT INTO pipelined VALUES (1)`.execute();
      // the transaction sees its own first row before the second round trip
      const [[seen]] = await Promise.all([
        tx<{ n: number }[]>`SELECT count(*)::int AS n FROM pipelined`,
        first,
      ]);
      // code written for a transaction does not open a nested one on this connection: to
      // inTransaction the reserved connection has no `begin` (postgres.js gives it none)
      expect('begin' in tx).toBe(false);
      const nested = inTransaction(tx, (inner) => inner`INSERT INTO pipelined VALUES (2)`);
      return { result: seen!.n, inFlight: [nested, tx`INSERT INTO pipelined VALUES (3)`.execute()] };
    });
    expect(result).toBe(1);
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it('keeps nothing when a statement fails, and hands back the error of that statement', async () => {
    const failing = pipelinedTransaction(db.sql, async (tx) => ({
      result: null,
      inFlight: [
        tx`INSERT INTO pipelined VALUES (10)`.execute(),
        tx`INSERT INTO pipelined VALUES (1)`.execute(), // duplicate key: 23505
        tx`INSERT INTO pipelined VALUES (11)`.execute(),
      ],
    }));
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    const earlyFailure = pipelinedTransaction(db.sql, async (tx) => {
      await Promise.all([tx`INSERT INTO pipelined VALUES (20)`.execute(), tx`SELECT 1 / 0`.execute()]);
      return { result: null, inFlight: [] };
    });
    await expect(earlyFailure).rejects.toMatchObject({ code: '22012' });
    expect(await ids()).toEqual([1, 2, 3]);
    // the connections went back to the pool clean: a new transaction works on each
    await Promise.all(
      [30, 31].map((id) =>
        pipelinedTransaction(db.sql, async (tx) => ({
          result: null,
          inFlight: [tx`INSERT INTO pipelined VALUES (${id})`.execute()],
        })),
      ),
    );
    expect(await ids()).toEqual([1, 2, 3, 30, 31]);
  });
});

describe('signing keys in Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('lets processes starting together agree on one key, and keeps retired keys published', async () => {
    const pools = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: db.url, poolMax: 2 })));
    try {
      const rings = await Promise.all(
        pools.map((p) => loadSigningKeys({ store: signingKeysRepository(p.sql) })),
      );
      expect(new Set(rings.map((r) => r.kid)).size).toBe(1);
      const store = signingKeysRepository(db.sql);
      await rotateKey(store);
      const after = await loadSigningKeys({ store });
      expect(after.kid).not.toBe(rings[0]!.kid);
      expect(after.jwks().keys.map((k) => k.kid)).toContain(rings[0]!.kid);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });
});
