import { createHash } from 'node:crypto';
import { HttpProblem } from '../problem.ts';
import type { IssuedReceipt, ReceiptsService, VerdictToAttest } from '../receipts/receipts.service.ts';
import type { Runtime } from '../runtime.ts';
import { generateApiKey, isWellFormedApiKey } from './api-key-format.ts';
import { BearerKeyMemo } from './bearer-key-memo.ts';

/** SPEC 2.1/5: anonymous keys read trust data, get 50 checks, never expire. */
export const ANONYMOUS_SCOPES = ['trust:read'] as const;
export const ANONYMOUS_TRIAL_LIMIT = 50;

export interface AgentCredential {
  api_key: string;
  credential_type: 'api_key';
  scopes: string[];
  trial_limit: number;
  credential_expires: null;
}

export interface AuthenticatedAgent {
  keyId: number;
  /** Safe to log and to show in audits (never the secret). */
  keyPrefix: string;
  scopes: string[];
}

/** Hash of a client address with a per-deployment pepper: enough to group, not to recover. */
export function hashClientAddress(ip: string, pepper: string): string {
  return createHash('sha256').update(`${pepper}:${ip}`).digest('hex').slice(0, 32);
}

export function agentKeysService(runtime: Runtime, receipts: ReceiptsService) {
  const { repos } = runtime;
  const resourceMetadata = `${runtime.config.publicBaseUrl}/.well-known/oauth-protected-resource`;

  const unauthorized = (detail: string, error: 'invalid_request' | 'invalid_token') =>
    new HttpProblem(
      401,
      'Unauthorized',
      detail,
      { get_key: `${runtime.config.publicBaseUrl}/agent/auth` },
      {
        'www-authenticate': `Bearer realm="mcp-trust-observatory", error="${error}", resource_metadata="${resourceMetadata}"`,
      },
    );

  /** The key from an Authorization header, checked for form and checksum before any lookup. */
  const parseBearer = (authorization: string | undefined): string => {
    if (!authorization)
      throw unauthorized(
        'This endpoint needs an API key: Authorization: Bearer <api_key>. Get one with POST /agent/auth.',
        'invalid_request',
      );
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <api_key>".', 'invalid_request');
    const key = match[1]!;
    if (!isWellFormedApiKey(key))
      throw unauthorized('The API key is malformed or mistyped (checksum mismatch).', 'invalid_token');
    return key;
  };

  const bearerKeys = new BearerKeyMemo();

  const allowanceUsedUp = () =>
    new HttpProblem(
      402,
      'Trial Allowance Used Up',
      `This key has used all of its ${ANONYMOUS_TRIAL_LIMIT} free trust checks. See ${runtime.config.publicBaseUrl}/get-started for higher volume.`,
      { checks_remaining: 0, get_started: `${runtime.config.publicBaseUrl}/get-started` },
      { link: `<${runtime.config.publicBaseUrl}/get-started>; rel="payment"` },
    );

  return {
    /** POST /agent/auth: one call, no human step, a key with 50 checks. */
    async issueAnonymousKey(clientIp: string): Promise<AgentCredential> {
      const key = generateApiKey();
      const row = await repos.apiKeys.insert({
        prefix: key.displayPrefix,
        secretSha256: key.sha256,
        scopes: [...ANONYMOUS_SCOPES],
        trialLimit: ANONYMOUS_TRIAL_LIMIT,
        createdIpHash: hashClientAddress(clientIp, runtime.addressPepper),
      });
      await repos.audit.append([
        {
          event_id: `evt_key_${row.id}`,
          event_type: 'key_issued',
          occurred_at: row.created_at,
          server_id: null,
          agent_id: key.displayPrefix,
          key_id: row.id,
          receipt_id: null,
          payload: { scopes: row.scopes, trial_limit: row.trial_limit },
        },
      ]);
      return {
        api_key: key.key,
        credential_type: 'api_key',
        scopes: [...ANONYMOUS_SCOPES],
        trial_limit: ANONYMOUS_TRIAL_LIMIT,
        credential_expires: null,
      };
    },

    /** Checks an `Authorization: Bearer <key>` header; throws a 401 problem otherwise. */
    async authenticate(authorization: string | undefined): Promise<AuthenticatedAgent> {
      const row = await repos.apiKeys.findBySecretHash(bearerKeys.keyHash(authorization, parseBearer));
      if (!row) throw unauthorized('The API key is not known.', 'invalid_token');
      return { keyId: row.id, keyPrefix: row.prefix, scopes: row.scopes };
    },

    /**
     * The SHA-256 of the bearer key, checked for form and checksum (401 problem otherwise) but
     * not looked up: the lookup and the check it uses happen with the receipt (chargeWithReceipt).
     */
    bearerKeyHash(authorization: string | undefined): Buffer {
      return bearerKeys.keyHash(authorization, parseBearer);
    },

    /**
     * Uses one trust check of the key and signs and logs the receipt of `verdict`, atomically
     * and group-committed (see ReceiptsService.issueMetered): 401 for an unknown key, 402 once
     * the allowance is used up. Returns the agent, the checks remaining after this one and the
     * receipt.
     */
    async chargeWithReceipt(
      keyHash: Buffer,
      verdict: VerdictToAttest,
    ): Promise<{ agent: AuthenticatedAgent; remaining: number; receipt: IssuedReceipt }> {
      const outcome = await receipts.issueMetered(keyHash, verdict);
      if (outcome.status === 'unknown_key') throw unauthorized('The API key is not known.', 'invalid_token');
      if (outcome.status === 'exhausted') throw allowanceUsedUp();
      const { key, receipt } = outcome;
      return {
        agent: { keyId: key.key_id, keyPrefix: key.key_prefix, scopes: key.scopes },
        remaining: key.remaining,
        receipt,
      };
    },
  };
}

export type AgentKeysService = ReturnType<typeof agentKeysService>;
