import {
  type AuditRepository,
  auditLeafData,
  auditRepository,
  type Checkpoint,
  type NewAuditEvent,
  pipelinedTransaction,
} from '@observatory/db';
import {
  type KeyRing,
  type ReceiptEvidence,
  type ReceiptLatency,
  type ReceiptVerdict,
  signCheckpoint,
  signReceipt,
  verifyInclusion,
  verifyReceipt,
} from '@observatory/receipts';
import { BatchWriter } from '../batch-writer.ts';
import type { Runtime } from '../runtime.ts';

/** What a receipt attests: the verdict an agent was given about a server, and when. */
export interface VerdictToAttest {
  server_url: string;
  server_id: number | null;
  verdict: ReceiptVerdict;
  score: number | null;
  latency: ReceiptLatency;
  evidence: ReceiptEvidence;
  /** Who asked (never the secret): for the audit trail. */
  key_id: number;
  key_prefix: string;
  /** What the agent asked about, as it asked (name or URL). */
  query: string;
}

export interface IssuedReceipt {
  receipt_id: string;
  jws: string;
  log_index: number;
  issued_at: Date;
}

export interface ReceiptVerification {
  valid: boolean;
  reason?: string;
  detail?: string;
  jws?: string;
  receipt: Record<string, unknown> | null;
  signature: { alg: string | null; kid: string | null; valid: boolean };
  log: {
    index: number | null;
    included: boolean;
    checkpoint: { tree_size: number; root_hash: string; issued_at: string; jws: string } | null;
    inclusion_proof: string[];
    leaf_hash: string | null;
    event?: Record<string, unknown>;
  };
}

const checkpointView = (c: Checkpoint) => ({
  tree_size: c.tree_size,
  root_hash: c.root_hash,
  issued_at: c.issued_at.toISOString(),
  jws: c.jws,
});

/**
 * Receipts and the audit log. Every receipt is signed inside the transaction that appends its
 * audit event, so it carries its own log index and the two can never disagree. Issuance is
 * batched: concurrent agent queries share one transaction (and one append lock).
 */
export function receiptsService(runtime: Runtime, ring: KeyRing) {
  const { sql } = runtime.db;
  const audit: AuditRepository = auditRepository(sql);
  const iss = runtime.config.publicBaseUrl;

  const writer = new BatchWriter<VerdictToAttest, IssuedReceipt>(
    (items) =>
      pipelinedTransaction(sql, async (tx) => {
        const now = new Date();
        const queue = await auditRepository(tx).startAppend(tx, (firstIndex) => {
          const issued: IssuedReceipt[] = [];
          const events: NewAuditEvent[] = items.map((v, i) => {
            const signed = signReceipt(
              ring,
              {
                iss,
                sub: v.server_url,
                verdict: v.verdict,
                score: v.score,
                latency: v.latency,
                evidence: v.evidence,
                log_index: firstIndex + i,
              },
              now.getTime(),
            );
            issued.push({
              receipt_id: signed.id,
              jws: signed.jws,
              log_index: firstIndex + i,
              issued_at: now,
            });
            return {
              event_id: `evt_${signed.id.slice(5)}`,
              event_type: 'agent_query',
              occurred_at: now,
              server_id: v.server_id,
              agent_id: v.key_prefix,
              key_id: v.key_id,
              receipt_id: signed.id,
              payload: {
                query: v.query,
                server_url: v.server_url,
                verdict: v.verdict,
                score: v.score,
                jws: signed.jws,
              },
            };
          });
          return { events, result: issued };
        });
        const { result: issued, inFlight } = queue();
        const rows = issued.map((r, i) => ({
          id: r.receipt_id,
          jws: r.jws,
          server_id: items[i]!.server_id,
          server_url: items[i]!.server_url,
          verdict: items[i]!.verdict,
          score: items[i]!.score,
          issued_at: r.issued_at,
          kid: ring.kid,
          audit_index: r.log_index,
        }));
        // the receipts rows go in the same round trip as the events and the COMMIT
        const receipts = tx`
          INSERT INTO receipts (id, jws, server_id, server_url, verdict, score, issued_at, kid, audit_index)
          SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(id text, jws text,
            server_id bigint, server_url text, verdict text, score double precision,
            issued_at timestamptz, kid text, audit_index bigint)`.execute();
        return { result: issued, inFlight: [...inFlight, receipts] };
      }),
    // one at a time: appends serialise on the audit lock anyway
    { maxBatch: 500, maxConcurrent: 1 },
  );
  runtime.beforeDatabaseClose(() => writer.drain());

  /** A signed checkpoint of the log as it is now (reuses the latest if nothing was added). */
  async function checkpointNow(): Promise<Checkpoint> {
    const size = await audit.size();
    const latest = await audit.latestCheckpoint();
    if (latest && latest.tree_size >= size) return latest;
    const root = await audit.merkleLog().root(size);
    const signed = signCheckpoint(ring, { log_id: iss, tree_size: size, root_hash: root });
    const checkpoint: Checkpoint = {
      tree_size: size,
      root_hash: root,
      issued_at: new Date(signed.checkpoint.issued_at),
      kid: signed.kid,
      jws: signed.jws,
    };
    await audit.insertCheckpoint(checkpoint);
    // another process may have stored this size first: theirs is as good, use what is stored
    return (await audit.checkpointCovering(size - 1)) ?? checkpoint;
  }

  return {
    ring,
    jwks: () => ring.jwks(),
    issue: (verdict: VerdictToAttest) => writer.write(verdict),
    checkpointNow,

    /** Checks a receipt by id or by its JWS: signature, claims, and inclusion in the log. */
    async verify(input: { id?: string; jws?: string }): Promise<ReceiptVerification> {
      let jws = input.jws;
      if (!jws && input.id) {
        const [row] = await sql<{ jws: string }[]>`SELECT jws FROM receipts WHERE id = ${input.id}`;
        if (!row) return unknown('unknown_receipt', 'No receipt with this id was issued here.');
        jws = row.jws;
      }
      if (!jws) return unknown('malformed', 'Give a receipt id or a JWS.');
      await ring.refresh().catch(() => {});
      const checked = await verifyReceipt(jws, ring.jwks());
      const header = checked.header as { alg?: string; kid?: string } | null;
      const signature = { alg: header?.alg ?? null, kid: header?.kid ?? null, valid: checked.valid };
      if (!checked.valid) {
        return {
          valid: false,
          reason: checked.reason,
          detail: checked.detail,
          receipt: null,
          signature,
          log: emptyLog(),
        };
      }
      const claims = checked.claims as unknown as Record<string, unknown> & { rid: string };
      const event = await audit.findByReceipt(claims.rid);
      if (!event) {
        return {
          valid: false,
          reason: 'not_in_log',
          detail: 'The signature is ours, but this receipt is not in our audit log.',
          receipt: claims,
          signature,
          log: emptyLog(),
        };
      }
      const checkpoint = (await audit.checkpointCovering(event.idx)) ?? (await checkpointNow());
      const proof = await audit.merkleLog().inclusionProof(event.idx, checkpoint.tree_size);
      const included = verifyInclusion({ data: auditLeafData(event) }, event.idx, proof, {
        log_id: iss,
        tree_size: checkpoint.tree_size,
        root_hash: checkpoint.root_hash,
        issued_at: checkpoint.issued_at.toISOString(),
      }).valid;
      return {
        valid: included && event.payload.jws === jws,
        ...(included ? {} : { reason: 'log_mismatch' }),
        receipt: claims,
        // the receipt itself, so a caller who only had the id can verify it offline too
        jws,
        signature,
        log: {
          index: event.idx,
          included,
          checkpoint: checkpointView(checkpoint),
          inclusion_proof: proof,
          leaf_hash: event.leaf_hash,
          // the fields the leaf hash is computed from: SHA-256(0x00 || canonical JSON of event)
          event: JSON.parse(auditLeafData(event)) as Record<string, unknown>,
        },
      };
    },
  };

  function unknown(reason: string, detail: string): ReceiptVerification {
    return {
      valid: false,
      reason,
      detail,
      receipt: null,
      signature: { alg: null, kid: null, valid: false },
      log: emptyLog(),
    };
  }
}

function emptyLog(): ReceiptVerification['log'] {
  return { index: null, included: false, checkpoint: null, inclusion_proof: [], leaf_hash: null };
}

export type ReceiptsService = ReturnType<typeof receiptsService>;
