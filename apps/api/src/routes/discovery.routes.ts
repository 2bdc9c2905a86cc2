import { type Runtime, SERVICE_NAME } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

/**
 * The documents agents read to find their way in: OAuth discovery metadata (describing the
 * anonymous key flow as it really is — there is no OAuth authorization or token endpoint),
 * the onboarding skill, and the pricing page.
 */
export function discoveryRoutes(app: FastifyInstance, runtime: Runtime) {
  const base = runtime.config.publicBaseUrl;

  app.get(
    '/.well-known/oauth-protected-resource',
    { schema: { tags: ['discovery'], summary: 'RFC 9728 protected resource metadata' } },
    async () => ({
      resource: base,
      resource_name: SERVICE_NAME,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
      scopes_supported: ['trust:read'],
      resource_documentation: `${base}/agent-onboarding/SKILL.md`,
      // Which endpoints want the key: only the agent query is metered.
      protected_endpoints: [`${base}/agent-query/{server}`],
    }),
  );

  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags: ['discovery'], summary: 'RFC 8414 authorization server metadata' } },
    async () => ({
      issuer: base,
      // Keys are not OAuth tokens: one unauthenticated POST returns a bearer API key. No
      // authorization endpoint, no token endpoint, no grants; the key never expires.
      response_types_supported: [],
      grant_types_supported: [],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['trust:read'],
      service_documentation: `${base}/agent-onboarding/SKILL.md`,
      anonymous_key_endpoint: `${base}/agent/auth`,
      anonymous_key_request: { type: 'anonymous', requested_credential_type: 'api_key' },
      anonymous_key_limits: { trial_limit: 50, keys_per_hour_per_address: 5, expires: null },
    }),
  );

  app.get(
    '/agent-onboarding/SKILL.md',
    { schema: { tags: ['discovery'], summary: 'Onboarding skill for agents (Agent Skills format)' } },
    async (_req, reply) => reply.type('text/markdown; charset=utf-8').send(onboardingSkill(base)),
  );

  app.get(
    '/get-started',
    { schema: { tags: ['discovery'], summary: 'Pricing for higher volume' } },
    async (request, reply) => {
      const plans = {
        plans: [
          { name: 'Anonymous trial', price: 'free', trust_checks: 50, how: `POST ${base}/agent/auth` },
          {
            name: 'Self-hosted',
            price: 'free (open source)',
            trust_checks: 'unlimited',
            how: 'run your own observatory: npm ci && npm start',
          },
          {
            name: 'Higher volume',
            price: 'on request',
            trust_checks: 'by agreement',
            how: `contact ${runtime.config.OPERATOR}`,
          },
        ],
        reporting_and_registration: 'always free',
      };
      if (!wantsHtml(request.headers.accept)) return plans;
      return reply
        .type('text/html; charset=utf-8')
        .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Get started · ${SERVICE_NAME}</title></head>
<body><main><h1>Get started</h1><p>Reporting interactions and registering servers are always free.</p><table><thead><tr><th scope="col">Plan</th><th scope="col">Price</th><th scope="col">Trust checks</th><th scope="col">How</th></tr></thead><tbody>
${plans.plans.map((p) => `<tr><td>${p.name}</td><td>${p.price}</td><td>${p.trust_checks}</td><td><code>${escapeHtml(p.how)}</code></td></tr>`).join('\n')}
</tbody></table></main></body></html>`);
    },
  );
}

export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

function onboardingSkill(base: string): string {
  return `---
name: mcp-trust-check
description: Check whether an MCP server is alive, fast and trustworthy before calling it, keep a signed receipt of the verdict, and report how the call went.
---

# Checking an MCP server with the MCP Trust Observatory

Use this before calling an MCP server you have not used recently. Verdicts rest on real MCP
handshake probes the observatory runs itself and on outcomes other agents reported.

## 1. Get an API key (once, no human step)

\`\`\`http
POST ${base}/agent/auth
Content-Type: application/json

{"type": "anonymous", "requested_credential_type": "api_key"}
\`\`\`

The answer holds \`api_key\` (keep it secret), \`scopes: ["trust:read"]\`, \`trial_limit: 50\` and
\`credential_expires: null\`. At most 5 keys per hour per address.

## 2. Ask for a verdict

\`\`\`http
GET ${base}/agent-query/<server URL, URL-encoded, or its name>
Authorization: Bearer <api_key>
\`\`\`

- \`verdict\`: \`PASS\` (score ≥ 70 and the latest probe up) → go ahead; \`FAIL\` (score < 30 or
  repeated failed probes) → do not call it, pick another server; \`UNCERTAIN\` → proceed with care.
- \`evidence: "none"\` means the observatory has no runtime evidence: it is not a judgement.
- \`ttl_seconds\`: reuse the verdict that long. \`checks_remaining\`: what is left of the 50 checks.
- Keep \`receipt_id\` and \`receipt\` (a signed JWS) if you may need to prove what you were told.

## 3. Verify a receipt (any time, by anyone)

\`GET ${base}/v1/verify-receipt?id=<receipt_id>\` or \`POST ${base}/v1/verify-receipt\` with
\`{"jws": "<receipt>"}\`. Offline: check the JWS (EdDSA) against \`${base}/.well-known/jwks.json\`.

## 4. Report how the call went (free, no key needed)

\`\`\`http
POST ${base}/api/report
Content-Type: application/json

{"server_url": "https://example.com/mcp", "success": true, "latency_ms": 230, "tool_name": "search", "agent_id": "my-agent"}
\`\`\`

On failure add \`error_type\` (timeout, connection_error, http_error, protocol_error, auth_error,
rate_limited, invalid_response, tool_error, other), \`error_message\` and \`http_status\`.

## Also available

- Without a key: \`GET ${base}/api/trust?url=<server URL>\` (scores and metrics, no receipt).
- The same tools over MCP at \`${base}/mcp\` (check_trust, report_interaction, …).
`;
}
