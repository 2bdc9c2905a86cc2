/**
 * Signed checkpoints of the audit log — "at tree_size N the root was R", signed with the same key
 * as receipts (a different typ keeps the two apart) — and the checks a client runs against them:
 * inclusion of a leaf, consistency between two checkpoints, and the full recomputation of a root
 * from the stored leaves that catches an edited or deleted row.
 */
import type { ProtectedHeaderParameters } from 'jose';
import { type JwsFailureReason, verifyCompactJws } from './jws-verify.ts';
import type { Jwks } from './key-store.ts';
import type { KeyRing } from './keys.ts';
import {
  fromHex,
  hashesEqual,
  type LeafBatches,
  type LeafData,
  leafHash,
  recomputeRoot,
  rootFromInclusionProof,
  verifyConsistencyProof,
} from './merkle.ts';
import { consistencyRanges, inclusionRanges } from './merkle-log.ts';

export const CHECKPOINT_TYP = 'observatory-checkpoint+jwt';

export interface Checkpoint {
  /** Which log this is (e.g. the service's base URL): checkpoints of different logs never compare. */
  log_id: string;
  tree_size: number;
  /** MTH of the first tree_size leaves, lower-case hex. */
  root_hash: string;
  /** ISO 8601 UTC. */
  issued_at: string;
}

export interface SignedCheckpoint {
  jws: string;
  kid: string;
  checkpoint: Checkpoint;
}

export function signCheckpoint(
  ring: KeyRing,
  input: Omit<Checkpoint, 'issued_at'>,
  now: Date = new Date(),
): SignedCheckpoint {
  const checkpoint: Checkpoint = {
    log_id: input.log_id,
    tree_size: input.tree_size,
    root_hash: input.root_hash,
    issued_at: now.toISOString(),
  };
  const problem = checkpointProblem(checkpoint);
  if (problem) throw new TypeError(`cannot sign checkpoint: ${problem}`);
  return { jws: ring.sign(CHECKPOINT_TYP, checkpoint), kid: ring.kid, checkpoint };
}

export type CheckpointVerification =
  | { valid: true; header: ProtectedHeaderParameters; checkpoint: Checkpoint }
  | {
      valid: false;
      reason: JwsFailureReason | 'invalid_claims';
      detail: string;
      header: ProtectedHeaderParameters | null;
      checkpoint: null;
    };

export async function verifyCheckpoint(jws: string, jwks: Jwks): Promise<CheckpointVerification> {
  const result = await verifyCompactJws(jws, jwks, CHECKPOINT_TYP);
  if (!result.ok) {
    return {
      valid: false,
      reason: result.reason,
      detail: result.detail,
      header: result.header,
      checkpoint: null,
    };
  }
  const problem = checkpointProblem(result.payload);
  if (problem) {
    return {
      valid: false,
      reason: 'invalid_claims',
      detail: problem,
      header: result.header,
      checkpoint: null,
    };
  }
  return { valid: true, header: result.header, checkpoint: result.payload as Checkpoint };
}

export type ProofFailureReason =
  /** A hash in the proof, the leaf hash or a checkpoint root is not 64 lower-case hex digits. */
  | 'bad_encoding'
  | 'index_out_of_range'
  /** The proof has the wrong number of hashes for this index/size pair. */
  | 'wrong_proof_length'
  /** The proof does not lead to the checkpoint's root. */
  | 'root_mismatch'
  | 'different_log'
  /** The "new" checkpoint is smaller than the old one. */
  | 'size_decreased'
  /** Recomputation read fewer leaves than the checkpoint covers (rows deleted). */
  | 'missing_leaves';

export type ProofCheck = { valid: true } | { valid: false; reason: ProofFailureReason; detail: string };

const fail = (reason: ProofFailureReason, detail: string): ProofCheck => ({ valid: false, reason, detail });

/** The leaf: its raw data, or its RFC 6962 leaf hash in hex. */
export type LeafInput = { data: LeafData } | { leaf_hash: string };

/**
 * Is the leaf at `index` in the tree the checkpoint commits to? Verify the checkpoint's signature
 * first (verifyCheckpoint); this checks the hashes only.
 */
export function verifyInclusion(
  leaf: LeafInput,
  index: number,
  proof: readonly string[],
  checkpoint: Checkpoint,
): ProofCheck {
  const hash = 'data' in leaf ? leafHash(leaf.data) : fromHex(leaf.leaf_hash);
  const root = fromHex(checkpoint.root_hash);
  const path = decodeAll(proof);
  if (!hash || !root || !path) return fail('bad_encoding', 'hashes must be 64 lower-case hex digits');
  if (!Number.isSafeInteger(index) || index < 0 || index >= checkpoint.tree_size) {
    return fail('index_out_of_range', `index ${index} is outside a tree of size ${checkpoint.tree_size}`);
  }
  const expected = inclusionRanges(index, checkpoint.tree_size).length;
  if (path.length !== expected) {
    return fail('wrong_proof_length', `expected ${expected} hashes, got ${path.length}`);
  }
  const computed = rootFromInclusionProof(hash, index, checkpoint.tree_size, path);
  if (!computed || !hashesEqual(computed, root))
    return fail('root_mismatch', 'the proof does not lead to the root');
  return { valid: true };
}

/** Is `older` a prefix of `newer` (the log only grew)? Verify both signatures first. */
export function verifyConsistency(
  older: Checkpoint,
  newer: Checkpoint,
  proof: readonly string[],
): ProofCheck {
  if (older.log_id !== newer.log_id) return fail('different_log', `${older.log_id} vs ${newer.log_id}`);
  const oldRoot = fromHex(older.root_hash);
  const newRoot = fromHex(newer.root_hash);
  const path = decodeAll(proof);
  if (!oldRoot || !newRoot || !path) return fail('bad_encoding', 'hashes must be 64 lower-case hex digits');
  if (newer.tree_size < older.tree_size) {
    return fail('size_decreased', `tree size went from ${older.tree_size} to ${newer.tree_size}`);
  }
  const trivial = older.tree_size === 0 || older.tree_size === newer.tree_size;
  const expected = trivial ? 0 : consistencyRanges(older.tree_size, newer.tree_size).length;
  if (path.length !== expected) {
    return fail('wrong_proof_length', `expected ${expected} hashes, got ${path.length}`);
  }
  if (!verifyConsistencyProof(older.tree_size, newer.tree_size, oldRoot, newRoot, path)) {
    return fail('root_mismatch', 'the proof does not connect the two roots');
  }
  return { valid: true };
}

/**
 * Recomputes the root from the stored leaf data (streaming, batch by batch) and compares it with
 * a checkpoint. Any edited, deleted, inserted or reordered row among the first tree_size leaves
 * changes the root. `batches` must yield leaves in log-index order from index 0.
 */
export async function auditAgainstCheckpoint(
  batches: LeafBatches,
  checkpoint: Checkpoint,
): Promise<ProofCheck & { recomputed: { tree_size: number; root_hash: string } }> {
  const recomputed = await recomputeRoot(batches, { treeSize: checkpoint.tree_size });
  if (recomputed.tree_size < checkpoint.tree_size) {
    return {
      ...fail('missing_leaves', `found ${recomputed.tree_size} of ${checkpoint.tree_size} leaves`),
      recomputed,
    };
  }
  if (recomputed.root_hash !== checkpoint.root_hash) {
    return { ...fail('root_mismatch', 'the stored leaves do not hash to the checkpointed root'), recomputed };
  }
  return { valid: true, recomputed };
}

function decodeAll(hexes: readonly string[]): Uint8Array[] | null {
  if (!Array.isArray(hexes)) return null;
  const out: Uint8Array[] = [];
  for (const hex of hexes) {
    const hash = fromHex(hex);
    if (!hash) return null;
    out.push(hash);
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkpointProblem(value: unknown): string | null {
  if (!isObject(value)) return 'checkpoint is not a JSON object';
  if (typeof value.log_id !== 'string' || value.log_id === '') return 'log_id is missing';
  if (!Number.isSafeInteger(value.tree_size) || (value.tree_size as number) < 0) {
    return 'tree_size is not a non-negative integer';
  }
  if (typeof value.root_hash !== 'string' || !fromHex(value.root_hash))
    return 'root_hash is not 64 hex digits';
  if (typeof value.issued_at !== 'string' || Number.isNaN(Date.parse(value.issued_at))) {
    return 'issued_at is not a timestamp';
  }
  return null;
}
