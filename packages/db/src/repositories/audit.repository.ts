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

/**
 * One lock for every append: leaf indexes are contiguous and the tree is built in order. The
 * database's audit_append (migration 0004) takes the same key.
 */
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
  // built in key order, so canonicalJson has nothing to copy
  return canonicalJson({
    agent_id: event.agent_id,
    event_id: event.event_id,
    event_type: event.event_type,
    idx: event.idx,
    key_id: event.key_id,
    occurred_at: event.occurred_at.toISOString(),
    payload: event.payload,
    receipt_id: event.receipt_id,
    server_id: event.server_id,
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

/**
 * An event's leaf data with its index still open, as the text before and after it: the
 * canonical JSON is built once, outside the append lock, and only the index is put in under it
 * (by audit_append, in the database). Keys are sorted, so "idx" follows agent_id, event_id and
 * event_type — strings, in which an unescaped `"idx":` cannot occur — and the first
 * `"idx":<marker>` is the top-level one.
 */
export function auditLeafParts(event: NewAuditEvent): { head: string; tail: string } {
  const marker = '"idx":-1';
  const text = auditLeafData({ ...event, idx: -1 });
  const at = text.indexOf(marker);
  return { head: text.slice(0, at + marker.length - 2), tail: text.slice(at + marker.length) };
}

/**
 * Queues audit_append (migration 0004) for these events on `tx`, not waiting for it: the
 * database takes the append lock, gives the events the next indexes, stores them with their
 * leaf hashes and stores the tree nodes they complete — so the lock is held for that work and
 * the COMMIT behind it, never across a round trip to this process. Resolves to the first index.
 */
function queueAuditAppend(tx: SqlOrTx, events: readonly NewAuditEvent[]): Promise<number> {
  const heads: string[] = [];
  const tails: string[] = [];
  for (const event of events) {
    const { head, tail } = auditLeafParts(event);
    heads.push(head);
    tails.push(tail);
  }
  // Each list goes as one text, split in the database on U+0001: JSON text never holds that
  // character raw (JSON.stringify escapes every control character), and a plain text parameter
  // needs no escaping — a text[] parameter had every quote of every leaf escaped (~6 µs a report).
  return tx<{ first: number }[]>`
    SELECT audit_append(string_to_array(${heads.join(LEAF_SEPARATOR)}::text, E'\x01'),
                        string_to_array(${tails.join(LEAF_SEPARATOR)}::text, E'\x01'))::bigint AS first`
    .execute()
    .then(([row]) => row!.first);
}

const LEAF_SEPARATOR = '\u0001';

/** The stored form of events appended from index `first` (leaf hashes as the database made them). */
function storedFrom(first: number, events: readonly NewAuditEvent[]): StoredAuditEvent[] {
  return events.map((e, i) => {
    const stored = { ...e, idx: first + i };
    return { ...stored, leaf_hash: toHex(leafHash(auditLeafData(stored))) };
  });
}

/** An append under way: the lock is held and the next index known. */
export interface StartedAppend {
  /** The index the first event appended gets. */
  firstIndex: number;
  /**
   * Queues the events' append (they get the indexes from firstIndex on) without waiting for it:
   * it is returned in flight, to share a round trip with the caller's COMMIT (see
   * pipelinedTransaction). It fails if the log moved meanwhile, which the lock rules out.
   */
  append(events: NewAuditEvent[]): { inFlight: Array<Promise<unknown>> };
}

export function auditRepository(sql: SqlOrTx) {
  return {
    /**
     * Takes the append lock and reads the log's size (the repository must be made on a
     * transaction): resolves once the lock is held, which it is to the end of the transaction.
     * For callers that need their first index before they append (receipts sign it); others use
     * queueAppend.
     */
    async startAppend(): Promise<StartedAppend> {
      // Sent together, in this order (execute() queues the lock before the read): the read runs
      // once the lock is held, and its statement snapshot then sees every earlier append.
      const locked = sql`SELECT pg_advisory_xact_lock(${AUDIT_APPEND_LOCK})`.execute();
      const [, size] = await Promise.all([locked, auditNodeStore(sql).size()]);
      let used = false;
      return {
        firstIndex: size,
        append(events) {
          if (used) throw new Error('append() once per startAppend()');
          used = true;
          if (events.length === 0) return { inFlight: [] };
          const appended = queueAuditAppend(sql, events).then((first) => {
            if (first !== size)
              throw new Error(`audit log moved under its lock: expected ${size}, got ${first}`);
          });
          return { inFlight: [appended] };
        },
      };
    },

    /**
     * Queues the append of these events on the repository's transaction, not waiting for it: the
     * lock is taken, and held, only from the moment the database gets to it. Resolves to the
     * first index.
     */
    queueAppend(events: NewAuditEvent[]): Promise<number> {
      return queueAuditAppend(sql, events);
    },

    /**
     * Appends events inside the caller's transaction and waits for them to be written.
     * Everything commits or rolls back with the caller's other writes.
     */
    async appendInTransaction(tx: SqlOrTx, events: NewAuditEvent[]): Promise<StoredAuditEvent[]> {
      return storedFrom(await queueAuditAppend(tx, events), events);
    },

    /** Appends in a transaction of its own (needs a pool, not a transaction). */
    async append(events: NewAuditEvent[]): Promise<StoredAuditEvent[]> {
      if (!('begin' in sql))
        throw new Error('append() needs a pool; inside a transaction use appendInTransaction');
      return sql.begin((tx) => this.appendInTransaction(tx, events));
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
     * Retention: deletes event rows (and so receipts, a view of them) older than `before`, but
     * only below the latest checkpoint, so everything pruned is provable from its kept leaf hash. Returns the
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
