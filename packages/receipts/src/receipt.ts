/**
 * Signed receipts: a compact JWS (EdDSA) over the trust verdict given to an agent, verifiable by
 * anyone holding the JWKS. See README.md for the exact format.
 */
import type { ProtectedHeaderParameters } from 'jose';
import { type JwsFailureReason, verifyCompactJws } from './jws-verify.ts';
import type { Jwks } from './key-store.ts';
import type { KeyRing } from './keys.ts';
import { newReceiptId, RECEIPT_ID_PATTERN } from './receipt-id.ts';
import type { Signer } from './signing-worker.ts';

/** Media type in the protected header; keeps a checkpoint from passing for a receipt. */
export const RECEIPT_TYP = 'observatory-receipt+jwt';

export const RECEIPT_VERDICTS = ['PASS', 'UNCERTAIN', 'FAIL'] as const;
export type ReceiptVerdict = (typeof RECEIPT_VERDICTS)[number];

export interface ReceiptLatency {
  p50_ms: number | null;
  p95_ms: number | null;
}

/** What the verdict rests on. `window` is required; other JSON fields are free (counts, etc.). */
export interface ReceiptEvidence {
  /** The measurement window, ISO 8601 timestamps. */
  window: { from: string; to: string };
  [field: string]: unknown;
}

export interface ReceiptClaims {
  /** Receipt id, `rcpt_` + 26-character ULID. */
  rid: string;
  /** The issuing service (its base URL). */
  iss: string;
  /** Issued at, seconds since the epoch (JWT NumericDate). */
  iat: number;
  /** The MCP server the verdict is about (its normalized URL). */
  sub: string;
  verdict: ReceiptVerdict;
  /** 0–100, or null when there is no runtime evidence. */
  score: number | null;
  latency: ReceiptLatency;
  evidence: ReceiptEvidence;
  /** Index of this receipt's leaf in the audit log, when known at signing time. */
  log_index?: number;
}

/** What the caller supplies; rid and iat are filled in unless given. */
export type ReceiptInput = Omit<ReceiptClaims, 'rid' | 'iat'> & Partial<Pick<ReceiptClaims, 'rid' | 'iat'>>;

export interface SignedReceipt {
  /** = claims.rid */
  id: string;
  jws: string;
  kid: string;
  claims: ReceiptClaims;
}

function receiptClaims(input: ReceiptInput, nowMs: number): ReceiptClaims {
  // Fixed member order keeps receipts byte-stable and readable.
  const claims: ReceiptClaims = {
    rid: input.rid ?? newReceiptId(nowMs),
    iss: input.iss,
    iat: input.iat ?? Math.floor(nowMs / 1000),
    sub: input.sub,
    verdict: input.verdict,
    score: input.score,
    latency: { p50_ms: input.latency.p50_ms, p95_ms: input.latency.p95_ms },
    evidence: input.evidence,
  };
  if (input.log_index !== undefined) claims.log_index = input.log_index;
  const problem = claimsProblem(claims);
  if (problem) throw new TypeError(`cannot sign receipt: ${problem}`);
  return claims;
}

/** Signs a receipt with the ring's active key. Synchronous and fast (no await). */
export function signReceipt(ring: KeyRing, input: ReceiptInput, nowMs: number = Date.now()): SignedReceipt {
  const claims = receiptClaims(input, nowMs);
  return { id: claims.rid, jws: ring.sign(RECEIPT_TYP, claims), kid: ring.kid, claims };
}

/** Signs many receipts at once off the main thread (see Signer); same receipts as signReceipt. */
export async function signReceipts(
  ring: KeyRing,
  inputs: readonly ReceiptInput[],
  worker: Signer,
  nowMs: number = Date.now(),
): Promise<SignedReceipt[]> {
  const kid = ring.kid;
  const claims = inputs.map((input) => receiptClaims(input, nowMs));
  const jws = await ring.signMany(RECEIPT_TYP, claims, worker);
  return claims.map((c, i) => ({ id: c.rid, jws: jws[i]!, kid, claims: c }));
}

export type ReceiptFailureReason = JwsFailureReason | 'invalid_claims';

export type ReceiptVerification =
  | { valid: true; header: ProtectedHeaderParameters; claims: ReceiptClaims }
  | {
      valid: false;
      reason: ReceiptFailureReason;
      detail: string;
      /** The protected header when it could be decoded (unverified). */
      header: ProtectedHeaderParameters | null;
      /** Never returned unverified: a forged receipt's claims are not evidence of anything. */
      claims: null;
    };

/** Verifies a receipt against a JWKS with jose: signature, alg, typ, kid and claim shapes. */
export async function verifyReceipt(jws: string, jwks: Jwks): Promise<ReceiptVerification> {
  const result = await verifyCompactJws(jws, jwks, RECEIPT_TYP);
  if (!result.ok)
    return {
      valid: false,
      reason: result.reason,
      detail: result.detail,
      header: result.header,
      claims: null,
    };
  const problem = claimsProblem(result.payload);
  if (problem)
    return { valid: false, reason: 'invalid_claims', detail: problem, header: result.header, claims: null };
  return { valid: true, header: result.header, claims: result.payload as ReceiptClaims };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumberOrNull = (value: unknown): boolean =>
  value === null || (typeof value === 'number' && Number.isFinite(value));

/** Why `value` is not a well-formed ReceiptClaims, or null if it is. */
function claimsProblem(value: unknown): string | null {
  if (!isObject(value)) return 'claims are not a JSON object';
  if (typeof value.rid !== 'string' || !RECEIPT_ID_PATTERN.test(value.rid)) return 'rid is not a receipt id';
  if (typeof value.iss !== 'string' || value.iss === '') return 'iss is missing';
  if (!Number.isSafeInteger(value.iat)) return 'iat is not an integer NumericDate';
  if (typeof value.sub !== 'string' || value.sub === '') return 'sub is missing';
  if (!RECEIPT_VERDICTS.includes(value.verdict as ReceiptVerdict))
    return 'verdict is not PASS, UNCERTAIN or FAIL';
  if (!isNumberOrNull(value.score)) return 'score is not a number or null';
  const latency = value.latency;
  if (!isObject(latency) || !isNumberOrNull(latency.p50_ms) || !isNumberOrNull(latency.p95_ms)) {
    return 'latency is not {p50_ms, p95_ms}';
  }
  const evidence = value.evidence;
  if (!isObject(evidence) || !isObject(evidence.window)) return 'evidence.window is missing';
  if (typeof evidence.window.from !== 'string' || typeof evidence.window.to !== 'string') {
    return 'evidence.window is not {from, to}';
  }
  if (
    value.log_index !== undefined &&
    !(Number.isSafeInteger(value.log_index) && (value.log_index as number) >= 0)
  ) {
    return 'log_index is not a non-negative integer';
  }
  return null;
}
