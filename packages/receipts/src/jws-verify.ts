/**
 * Verification of our compact JWS (receipts and checkpoints) with jose alone, so it is exactly
 * what any third party holding the JWKS would do. Failures come back as a reason code rather
 * than an exception: an invalid receipt is an answer, not an error.
 */
import {
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  type ProtectedHeaderParameters,
} from 'jose';
import type { Jwks } from './key-store.ts';
import { SIGNING_ALG } from './keys.ts';

export type JwsFailureReason =
  /** Not a compact JWS, or header/payload not decodable JSON. */
  | 'malformed'
  /** alg is not EdDSA (including "none"). */
  | 'wrong_alg'
  /** typ says it is some other kind of token, e.g. a checkpoint offered as a receipt. */
  | 'wrong_typ'
  /** No key in the JWKS has this kid. */
  | 'unknown_kid'
  /** The signature does not match the header and payload. */
  | 'bad_signature';

export type JwsVerification =
  | { ok: true; header: ProtectedHeaderParameters; payload: unknown }
  | { ok: false; reason: JwsFailureReason; detail: string; header: ProtectedHeaderParameters | null };

/** createLocalJWKSet caches imported keys inside the function it returns; keep one per JWKS. */
const keySets = new WeakMap<Jwks, ReturnType<typeof createLocalJWKSet>>();

function keySetFor(jwks: Jwks): ReturnType<typeof createLocalJWKSet> {
  let keySet = keySets.get(jwks);
  if (!keySet) {
    keySet = createLocalJWKSet(jwks);
    keySets.set(jwks, keySet);
  }
  return keySet;
}

export async function verifyCompactJws(jws: unknown, jwks: Jwks, typ: string): Promise<JwsVerification> {
  if (typeof jws !== 'string' || jws.split('.').length !== 3) {
    return {
      ok: false,
      reason: 'malformed',
      detail: 'not a compact JWS (three dot-separated parts)',
      header: null,
    };
  }
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return { ok: false, reason: 'malformed', detail: 'protected header is not base64url JSON', header: null };
  }
  if (header.alg !== SIGNING_ALG) {
    return { ok: false, reason: 'wrong_alg', detail: `alg is ${String(header.alg)}, expected EdDSA`, header };
  }
  if (header.typ !== typ) {
    return {
      ok: false,
      reason: 'wrong_typ',
      detail: `typ is ${String(header.typ)}, expected ${typ}`,
      header,
    };
  }
  if (typeof header.kid !== 'string') {
    return { ok: false, reason: 'malformed', detail: 'protected header has no kid', header };
  }

  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(jws, keySetFor(jwks), { algorithms: [SIGNING_ALG] }));
  } catch (error) {
    return { ok: false, ...failureOf(error), header };
  }
  try {
    return {
      ok: true,
      header,
      payload: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payloadBytes)),
    };
  } catch {
    return { ok: false, reason: 'malformed', detail: 'payload is not UTF-8 JSON', header };
  }
}

function failureOf(error: unknown): { reason: JwsFailureReason; detail: string } {
  const code = (error as { code?: unknown }).code;
  const detail = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return { reason: 'unknown_kid', detail: 'no key in the JWKS matches the kid' };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { reason: 'bad_signature', detail: 'signature verification failed' };
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return { reason: 'wrong_alg', detail };
    default:
      // ERR_JWS_INVALID and friends: a structural problem jose found (bad base64url, crit, …).
      return { reason: 'malformed', detail };
  }
}
