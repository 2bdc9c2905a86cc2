import { canonicalJson } from '@observatory/core';
import {
  type Hash,
  leafHash,
  MerkleLog,
  type NodeId,
  type NodeStore,
  type TreeNode,
  toHex,
} from '@observatory/receipts';
import type { SqlOrTx } from '../client.ts';

/** One lock for every append: leaf indexes are contiguous and the tree is built in order. */
const AUDIT_APPEND_LOCK = 724_310_003;

export const AUDIT_EVENT_TYPES = ['agent_query', 'report', 'registration', 'key_issued'] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export interface AuditEvent {
  idx: number;
  event_id: string;
  event_type: AuditEventType;
  occurred_at: Date;
  server_id: number | null;
  agent_id: string | null;
  key_id: number | null;
  receipt_id: string | null;
  payload: Record<string, unknown>;
}

export type NewAuditEvent = Omit<AuditEvent, 'idx'>;

export interface StoredAuditEvent extends AuditEvent {
  leaf_hash: string;
}

/**
 * The bytes of an event's Merkle leaf: canonical JSON of every field of the row, with the time
 * as an ISO string with milliseconds. Anyone holding an exported row can recompute it.
 */
export function auditLeafData(event: AuditEvent): string {
  return canonicalJson({
    idx: event.idx,
    event_id: event.event_id,
    event_type: event.event_type,
    occurred_at: event.occurred_at.toISOString(),
    server_id: event.server_id,
    agent_id: event.agent_id,
    key_id: event.key_id,
    receipt_id: event.receipt_id,
    payload: event.payload,
  });
}

interface NodeRow {
  level: number;
  idx: number;
  hash: Buffer;
}

/** The Merkle tree's complete subtrees in audit_tree_nodes (see receipts' NodeStore). */
export function auditNodeStore(sql: SqlOrTx): NodeStore {
  return {
    async size() {
      const [row] = await sql<{ n: number }[]>`
        SELECT coalesce(max(idx) + 1, 0)::bigint AS n FROM audit_tree_nodes WHERE level = 0`;
      return row?.n ?? 0;
    },
    async getNodes(ids: readonly NodeId[]) {
      if (ids.length === 0) return [];
      const rows = await sql<NodeRow[]>`
        SELECT n.level, n.idx, n.hash FROM audit_tree_nodes n
        JOIN unnest(${ids.map((i) => i.level)}::smallint[], ${ids.map((i) => i.index)}::bigint[]) AS w(level, idx)
          ON n.level = w.level AND n.idx = w.idx`;
      const found = new Map(rows.map((r) => [`${r.level}:${r.idx}`, new Uint8Array(r.hash) as Hash]));
      return ids.map((i) => found.get(`${i.level}:${i.index}`));
    },
    async putNodes(nodes: readonly TreeNode[]) {
      if (nodes.length === 0) return;
      await sql`
        INSERT INTO audit_tree_nodes (level, idx, hash)
        SELECT level, idx, decode(hash, 'hex')
        FROM unnest(${nodes.map((n) => n.level)}::smallint[], ${nodes.map((n) => n.index)}::bigint[],
                    ${nodes.map((n) => toHex(n.hash))}::text[]) AS t(level, idx, hash)
        ON CONFLICT DO NOTHING`;
    },
  };
}

type EventRow = Omit<StoredAuditEvent, 'leaf_hash'> & { leaf_hash: Buffer };

const toStored = (r: EventRow): StoredAuditEvent => ({ ...r, leaf_hash: r.leaf_hash.toString('hex') });

export interface Checkpoint {
  tree_size: number;
  root_hash: string;
  issued_at: Date;
  kid: string;
  jws: string;
}

export function auditRepository(sql: SqlOrTx) {
  return {
    /**
     * Appends events inside the caller's transaction: takes the append lock, gives the events
     * the next contiguous indexes, and stores them with the tree nodes they complete. `build`
     * receives the first index, so callers can put the index into what they sign (receipts).
     * Everything commits or rolls back with the caller's other writes.
     */
    async appendInTransaction<T>(
      tx: SqlOrTx,
      build: (firstIndex: number) => { events: NewAuditEvent[]; result: T },
    ): Promise<{ events: StoredAuditEvent[]; result: T }> {
      await tx`SELECT pg_advisory_xact_lock(${AUDIT_APPEND_LOCK})`;
      const log = new MerkleLog(auditNodeStore(tx));
      const firstIndex = await log.size();
      const built = build(firstIndex);
      if (built.events.length === 0) return { events: [], result: built.result };
      const events = built.events.map((e, i) => ({ ...e, idx: firstIndex + i }));
      const hashes = events.map((e) => leafHash(auditLeafData(e)));
      await log.append(hashes);
      const rows = events.map((e, i) => ({
        ...e,
        payload: tx.json(e.payload as never),
        leaf_hash: Buffer.from(hashes[i]!),
      }));
      await tx`INSERT INTO audit_events ${tx(rows, ['idx', 'event_id', 'event_type', 'occurred_at', 'server_id', 'agent_id', 'key_id', 'receipt_id', 'payload', 'leaf_hash'])}`;
      return {
        events: events.map((e, i) => ({ ...e, leaf_hash: toHex(hashes[i]!) })),
        result: built.result,
      };
    },

    /** Appends in a transaction of its own (needs a pool, not a transaction). */
    async append(events: NewAuditEvent[]): Promise<StoredAuditEvent[]> {
      if (!('begin' in sql))
        throw new Error('append() needs a pool; inside a transaction use appendInTransaction');
      return sql.begin(
        async (tx) => (await this.appendInTransaction(tx, () => ({ events, result: null }))).events,
      );
    },

    merkleLog(): MerkleLog {
      return new MerkleLog(auditNodeStore(sql));
    },

    async size(): Promise<number> {
      return auditNodeStore(sql).size();
    },

    async findByIndex(idx: number): Promise<StoredAuditEvent | undefined> {
      const [row] = await sql<EventRow[]>`SELECT * FROM audit_events WHERE idx = ${idx}`;
      return row ? toStored(row) : undefined;
    },

    async findByReceipt(receiptId: string): Promise<StoredAuditEvent | undefined> {
      const [row] = await sql<EventRow[]>`SELECT * FROM audit_events WHERE receipt_id = ${receiptId} LIMIT 1`;
      return row ? toStored(row) : undefined;
    },

    /** The stored events in index order, in batches (for recomputing the root from the rows). */
    async *eventBatches(treeSize: number, batchSize = 5_000, start = 0): AsyncGenerator<StoredAuditEvent[]> {
      for (let from = start; from < treeSize; from += batchSize) {
        const rows = await sql<EventRow[]>`
          SELECT * FROM audit_events WHERE idx >= ${from} AND idx < ${Math.min(treeSize, from + batchSize)}
          ORDER BY idx`;
        yield rows.map(toStored);
      }
    },

    /**
     * Retention: deletes event rows (and receipts) older than `before`, but only below the
     * latest checkpoint, so everything pruned is provable from its kept leaf hash. Returns the
     * index below which rows are now gone (kept in meta as audit_pruned_below).
     */
    async pruneBefore(before: Date): Promise<{ deleted: number; prunedBelow: number }> {
      const [cp] = await sql<
        { size: number | null }[]
      >`SELECT max(tree_size)::bigint AS size FROM audit_checkpoints`;
      const covered = cp?.size ?? 0;
      const [edge] = await sql<{ idx: number | null }[]>`
        SELECT max(idx)::bigint AS idx FROM audit_events WHERE occurred_at < ${before} AND idx < ${covered}`;
      if (edge?.idx === null || edge?.idx === undefined) {
        const [kept] = await sql<
          { value: string }[]
        >`SELECT value FROM meta WHERE key = 'audit_pruned_below'`;
        return { deleted: 0, prunedBelow: Number(kept?.value ?? 0) };
      }
      const prunedBelow = edge.idx + 1;
      const deleted = await sql`DELETE FROM audit_events WHERE idx < ${prunedBelow}`;
      await sql`DELETE FROM receipts WHERE audit_index < ${prunedBelow}`;
      await sql`
        INSERT INTO meta (key, value) VALUES ('audit_pruned_below', ${String(prunedBelow)})
        ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, EXCLUDED.value::bigint)::text`;
      return { deleted: deleted.count, prunedBelow };
    },

    async insertCheckpoint(c: Checkpoint): Promise<void> {
      await sql`
        INSERT INTO audit_checkpoints (tree_size, root_hash, issued_at, kid, jws)
        VALUES (${c.tree_size}, ${c.root_hash}, ${c.issued_at}, ${c.kid}, ${c.jws})
        ON CONFLICT (tree_size) DO NOTHING`;
    },

    async latestCheckpoint(): Promise<Checkpoint | undefined> {
      const [row] = await sql<Checkpoint[]>`SELECT * FROM audit_checkpoints ORDER BY tree_size DESC LIMIT 1`;
      return row;
    },

    async checkpointCovering(idx: number): Promise<Checkpoint | undefined> {
      const [row] = await sql<Checkpoint[]>`
        SELECT * FROM audit_checkpoints WHERE tree_size > ${idx} ORDER BY tree_size LIMIT 1`;
      return row;
    },

    async checkpoints(limit = 100): Promise<Checkpoint[]> {
      return sql<Checkpoint[]>`SELECT * FROM audit_checkpoints ORDER BY tree_size DESC LIMIT ${limit}`;
    },
  };
}

export type AuditRepository = ReturnType<typeof auditRepository>;
