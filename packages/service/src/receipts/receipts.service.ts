import {
  type AuditRepository,
  apiKeysRepository,
  auditLeafData,
  auditRepository,
  type Checkpoint,
  pipelinedTransaction,
  type StoredAuditEvent,
} from '@observatory/db';
import {
  type KeyRing,
  type ReceiptEvidence,
  type ReceiptLatency,
  type ReceiptVerdict,
  SigningPool,
  signCheckpoint,
  signReceipts,
  verifyInclusion,
  verifyReceipt,
} from '@observatory/receipts';
import { BatchWriter, refusalOf } from '../batch-writer.ts';
import type { Runtime } from '../runtime.ts';

/** What a receipt attests: the verdict an agent was given about a server, and when. */
export interface VerdictToAttest {
  server_url: string;
  server_id: number | null;
  verdict: ReceiptVerdict;
  score: number | null;
  latency: ReceiptLatency;
  evidence: ReceiptEvidence;
  /** What the agent asked about, as it asked (name or URL). */
  query: string;
}

/** The key a metered verdict is charged to, and what became of the charge. */
export interface KeyGrant {
  key_id: number;
  /** Safe to log and to show in audits (never the secret). */
  key_prefix: string;
  scopes: string[];
  /** Checks left on the key after this one. */
  remaining: number;
}

export type MeteredReceipt =
  | { status: 'issued'; key: KeyGrant; receipt: IssuedReceipt }
  | { status: 'unknown_key' }
  | { status: 'exhausted' };

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
  const signer = new SigningPool();

  /**
   * One transaction per batch of agent queries: the keys' checks are granted (each key
   * min(asked, left) under its row lock, handed out in arrival order), the granted verdicts are
   * signed under the append lock with their log indexes, and their events stored (the audit
   * event is the receipt's only record: `receipts` is a view of the log, see migration 0003) —
   * so a check is used exactly when its receipt is logged, and an answer costs one commit, not
   * two. Round trip one: BEGIN, the grant, the lock and the tree's edge; then the receipts are
   * signed on a worker thread (the event loop serves requests meanwhile); round trip two: the
   * rows and COMMIT. One batch at a time: a second one would wait in Postgres for the first
   * one's key rows and append lock anyway, and measured no faster than one batch twice the size.
   */
  const writer = new BatchWriter<{ keyHash: Buffer; verdict: VerdictToAttest }, MeteredReceipt>(
    (items) =>
      pipelinedTransaction(sql, async (tx) => {
        const now = new Date();
        const wanted = new Map<string, number>();
        for (const { keyHash } of items) {
          const hex = keyHash.toString('hex');
          wanted.set(hex, (wanted.get(hex) ?? 0) + 1);
        }
        const [grants, started] = await Promise.all([
          apiKeysRepository(tx).grantChecks(
            [...wanted].map(([hex, n]) => ({ secretSha256: Buffer.from(hex, 'hex'), wanted: n })),
          ),
          auditRepository(tx).startAppend(),
        ]);
        // hand the granted checks out in arrival order; only those get a receipt (and an index)
        const byHex = new Map(grants.map((g) => [g.secret_hex, { ...g, handed: 0 }]));
        const charged = items.map(({ keyHash }) => {
          const g = byHex.get(keyHash.toString('hex'));
          if (!g) return 'unknown_key' as const;
          if (g.handed >= g.granted) return 'exhausted' as const;
          g.handed += 1;
          return { key: g.key, remaining: g.remaining_before - g.handed };
        });
        const granted = items.flatMap((item, i) => {
          const c = charged[i]!;
          return typeof c === 'string' ? [] : [{ ...item, ...c }];
        });
        // signed off the main thread, with the indexes the lock reserved for them
        const signed = await signReceipts(
          ring,
          granted.map(({ verdict: v }, j) => ({
            iss,
            sub: v.server_url,
            verdict: v.verdict,
            score: v.score,
            latency: v.latency,
            evidence: v.evidence,
            log_index: started.firstIndex + j,
          })),
          signer,
          now.getTime(),
        );
        const { inFlight } = started.append(
          granted.map(({ verdict: v, key }, j) => ({
            event_id: `evt_${signed[j]!.id.slice(5)}`,
            event_type: 'agent_query',
            occurred_at: now,
            server_id: v.server_id,
            agent_id: key.prefix,
            key_id: key.id,
            receipt_id: signed[j]!.id,
            // keys in sorted order: the leaf's canonical JSON then needs no copy
            payload: {
              jws: signed[j]!.jws,
              query: v.query,
              score: v.score,
              server_url: v.server_url,
              verdict: v.verdict,
            },
          })),
        );
        // each issued receipt's answer (the receipts view reads them back from these events)
        let j = 0;
        const outcomes = charged.map((c): MeteredReceipt => {
          if (typeof c === 'string') return { status: c };
          const s = signed[j]!;
          const receipt = { receipt_id: s.id, jws: s.jws, log_index: started.firstIndex + j, issued_at: now };
          j += 1;
          return {
            status: 'issued',
            key: { key_id: c.key.id, key_prefix: c.key.prefix, scopes: c.key.scopes, remaining: c.remaining },
            receipt,
          };
        });
        return { result: outcomes, inFlight };
      }),
    { maxBatch: 500, maxConcurrent: 1 },
  );
  runtime.beforeDatabaseClose(async () => {
    await writer.drain();
    await signer.close();
  });

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
    /**
     * Uses one check of the key whose SHA-256 is `keyHash` and, when one was left, signs and
     * logs a receipt of `verdict` in the same transaction (group-committed with concurrent
     * asks). Unknown keys and used-up allowances get no receipt and use nothing.
     */
    issueMetered: (keyHash: Buffer, verdict: VerdictToAttest) =>
      writer.write({ keyHash, verdict }).catch((err: unknown) => {
        throw refusalOf(err, 'No receipt could be issued right now; no check was used. Retry shortly.');
      }),
    checkpointNow,

    /** Checks a receipt by id or by its JWS: signature, claims, and inclusion in the log. */
    async verify(input: { id?: string; jws?: string }): Promise<ReceiptVerification> {
      let jws = input.jws;
      // the audit event is the receipt's record (the receipts view reads the same rows)
      let logged: StoredAuditEvent | undefined;
      if (!jws && input.id) {
        logged = await audit.findByReceipt(input.id);
        if (typeof logged?.payload.jws !== 'string')
          return unknown('unknown_receipt', 'No receipt with this id was issued here.');
        jws = logged.payload.jws;
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
      const event = logged?.receipt_id === claims.rid ? logged : await audit.findByReceipt(claims.rid);
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
