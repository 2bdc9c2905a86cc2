import type { Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const receiptId = z
  .string()
  .trim()
  .regex(/^rcpt_[0-9A-Za-z]{1,64}$/, { error: 'must be a receipt id (rcpt_…)' });
const jws = z
  .string()
  .trim()
  .max(16_384, { error: 'is too long for a receipt' })
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, {
    error: 'must be a compact JWS (three base64url parts)',
  });

export function receiptRoutes(app: FastifyInstance, services: Services) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/v1/verify-receipt',
    {
      schema: {
        tags: ['receipts'],
        summary: 'Verify a receipt by id: signature, claims, inclusion in the audit log',
        querystring: z.object({ id: receiptId }),
      },
    },
    async (request) => services.receipts.verify({ id: request.query.id }),
  );

  api.post(
    '/v1/verify-receipt',
    {
      schema: {
        tags: ['receipts'],
        summary: 'Verify a receipt given as {receipt_id} or {jws}',
        body: z.union([z.object({ receipt_id: receiptId }), z.object({ jws })], {
          error: 'give {"receipt_id": "rcpt_…"} or {"jws": "<compact JWS>"}',
        }),
      },
    },
    async (request) =>
      services.receipts.verify(
        'receipt_id' in request.body ? { id: request.body.receipt_id } : { jws: request.body.jws },
      ),
  );

  app.get(
    '/.well-known/jwks.json',
    { schema: { tags: ['receipts'], summary: 'Public keys that sign receipts (retired keys included)' } },
    async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(services.receipts.jwks()),
  );

  app.get(
    '/v1/checkpoint',
    { schema: { tags: ['receipts'], summary: 'A signed checkpoint of the audit log as it is now' } },
    async () => {
      const c = await services.receipts.checkpointNow();
      return {
        tree_size: c.tree_size,
        root_hash: c.root_hash,
        issued_at: c.issued_at.toISOString(),
        kid: c.kid,
        jws: c.jws,
      };
    },
  );
}
