import { auditLeafData, auditRepository } from '@observatory/db';
import { auditAgainstCheckpoint, fromHex, leafHash, toHex } from '@observatory/receipts';
import type { ReceiptsService } from '../receipts/receipts.service.ts';
import type { Runtime } from '../runtime.ts';

export interface AuditVerification {
  valid: boolean;
  checked_at: string;
  tree_size: number;
  root_hash: string;
  recomputed_root_hash: string | null;
  /** Rows whose stored leaf hash no longer matches their content (edited rows). */
  altered_indexes: number[];
  /** Indexes with no row (deleted rows). */
  missing_indexes: number[];
  reason?: string;
}

/**
 * The consistency check of the audit log: recompute every leaf from the stored rows and the
 * root from the leaves, and compare with the latest signed checkpoint. An edited or deleted row
 * shows up here (and in the range proofs of any export page that covers it).
 */
export async function verifyAuditLog(
  runtime: Runtime,
  receipts: ReceiptsService,
): Promise<AuditVerification> {
  const checkpoint = await receipts.checkpointNow();
  const audit = auditRepository(runtime.db.sql);
  const altered: number[] = [];
  const missing: number[] = [];
  let expected = 0;
  const leaves = async function* () {
    for await (const batch of audit.eventBatches(checkpoint.tree_size)) {
      for (const e of batch) {
        for (; expected < e.idx; expected++) missing.push(expected);
        expected = e.idx + 1;
        if (toHex(leafHash(auditLeafData(e))) !== e.leaf_hash) altered.push(e.idx);
      }
      yield batch.map(auditLeafData);
    }
  };
  const result = await auditAgainstCheckpoint(leaves(), {
    log_id: runtime.config.publicBaseUrl,
    tree_size: checkpoint.tree_size,
    root_hash: checkpoint.root_hash,
    issued_at: checkpoint.issued_at.toISOString(),
  });
  for (; expected < checkpoint.tree_size; expected++) missing.push(expected);
  const verification: AuditVerification = {
    valid: result.valid && altered.length === 0 && missing.length === 0,
    checked_at: new Date().toISOString(),
    tree_size: checkpoint.tree_size,
    root_hash: checkpoint.root_hash,
    recomputed_root_hash: fromHex(result.recomputed.root_hash) ? result.recomputed.root_hash : null,
    altered_indexes: altered.slice(0, 100),
    missing_indexes: missing.slice(0, 100),
    ...(result.valid ? {} : { reason: result.reason }),
  };
  if (!verification.valid) runtime.logger.error({ verification }, 'AUDIT LOG INTEGRITY CHECK FAILED');
  await runtime.db.sql`
    INSERT INTO meta (key, value) VALUES ('audit_verification', ${JSON.stringify(verification)})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
  return verification;
}
