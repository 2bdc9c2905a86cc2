import { auditLeafData, auditRepository, readMeta } from '@observatory/db';
import { leafHash, StreamingRoot, toHex } from '@observatory/receipts';
import type { ReceiptsService } from '../receipts/receipts.service.ts';
import type { Runtime } from '../runtime.ts';

export interface AuditVerification {
  valid: boolean;
  checked_at: string;
  tree_size: number;
  root_hash: string;
  recomputed_root_hash: string;
  /** Events below this index were pruned (AUDIT_RETENTION_DAYS): their stored leaf hashes stand in. */
  pruned_below: number;
  /** Rows whose content no longer hashes to their stored leaf hash (edited rows). */
  altered_indexes: number[];
  /** Indexes with no row (deleted rows). */
  missing_indexes: number[];
}

/** Index below which audit rows were pruned by retention (0: nothing pruned). */
export async function auditPrunedBelow(runtime: Runtime): Promise<number> {
  return Number((await readMeta(runtime.db.sql, 'audit_pruned_below')) ?? 0);
}

/**
 * The consistency check of the audit log: recompute every leaf from the stored rows (pruned
 * ones from their kept leaf hashes) and the root from the leaves, and compare with the latest
 * signed checkpoint. An edited or deleted row shows up here, and in the range proofs of any
 * export page that covers it.
 */
export async function verifyAuditLog(
  runtime: Runtime,
  receipts: ReceiptsService,
): Promise<AuditVerification> {
  const { sql } = runtime.db;
  const checkpoint = await receipts.checkpointNow();
  const n = checkpoint.tree_size;
  const prunedBelow = Math.min(await auditPrunedBelow(runtime), n);
  const tree = new StreamingRoot();
  for (let from = 0; from < prunedBelow; from += 10_000) {
    const rows = await sql<{ hash: Buffer }[]>`
      SELECT hash FROM audit_tree_nodes WHERE level = 0 AND idx >= ${from} AND idx < ${Math.min(prunedBelow, from + 10_000)}
      ORDER BY idx`;
    for (const r of rows) tree.addLeafHash(new Uint8Array(r.hash));
  }
  const altered: number[] = [];
  const missing: number[] = [];
  let expected = prunedBelow;
  for await (const batch of auditRepository(sql).eventBatches(n, 5_000, prunedBelow)) {
    for (const e of batch) {
      for (; expected < e.idx; expected++) missing.push(expected);
      expected = e.idx + 1;
      const leaf = leafHash(auditLeafData(e));
      if (toHex(leaf) !== e.leaf_hash) altered.push(e.idx);
      tree.addLeafHash(leaf);
    }
  }
  for (; expected < n; expected++) missing.push(expected);
  const recomputed = toHex(tree.root());
  const verification: AuditVerification = {
    valid:
      altered.length === 0 && missing.length === 0 && tree.size === n && recomputed === checkpoint.root_hash,
    checked_at: new Date().toISOString(),
    tree_size: n,
    root_hash: checkpoint.root_hash,
    recomputed_root_hash: recomputed,
    pruned_below: prunedBelow,
    altered_indexes: altered.slice(0, 100),
    missing_indexes: missing.slice(0, 100),
  };
  if (!verification.valid) runtime.logger.error({ verification }, 'AUDIT LOG INTEGRITY CHECK FAILED');
  await sql`
    INSERT INTO meta (key, value) VALUES ('audit_verification', ${JSON.stringify(verification)})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
  return verification;
}
