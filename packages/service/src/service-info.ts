import type { Runtime } from './runtime.ts';

/** The MCP tools offered at /mcp (SPEC §4), named once for /api/info, docs and the MCP server. */
export const MCP_TOOLS = [
  {
    name: 'check_trust',
    description:
      'Trust score (0-100) and reliability metrics for an MCP server; call before using an unknown server.',
  },
  {
    name: 'report_interaction',
    description: 'Report the outcome of a call to an MCP server, to feed the trust network. Free.',
  },
  { name: 'get_leaderboard', description: 'Top-rated MCP servers, optionally filtered by category.' },
  {
    name: 'get_baselines',
    description: 'Behavioral baselines for a tool category: latency, success rates, sample counts.',
  },
  {
    name: 'check_anomaly',
    description: "Whether a server's recent behaviour deviates significantly from its baselines (z-scores).",
  },
  {
    name: 'register_server',
    description: 'Register a new MCP server so that it is probed and builds a trust score. Free.',
  },
  {
    name: 'get_server_history',
    description: 'Daily trust score and performance history of a server (last 30 days).',
  },
  {
    name: 'observatory_stats',
    description:
      'Overall statistics: servers tracked, interactions recorded, coverage by category, data freshness.',
  },
  {
    name: 'get_compliance_report',
    description: 'Audit trail of recorded interactions, filterable by server, agent or date range.',
  },
  {
    name: 'get_mica_attestation',
    description: 'MiCA / EU AI Act Article 12 compliance attestation for a server.',
  },
] as const;

export const SERVICE_NAME = 'MCP Trust Observatory';
export const SERVICE_VERSION = '1.0.0';

/** The body of GET /api/info (SPEC §1 fields; COMPAT.md names). */
export function serviceInfo(runtime: Runtime) {
  const base = runtime.config.publicBaseUrl;
  return {
    name: SERVICE_NAME,
    version: SERVICE_VERSION,
    description:
      'Runtime trust, liveness and signed receipts for MCP servers: verdicts backed by real MCP handshake probes and agent reports.',
    endpoints: {
      agent_auth: `${base}/agent/auth`,
      agent_query: `${base}/agent-query/{server}`,
      verify_receipt: `${base}/v1/verify-receipt`,
      trust: `${base}/api/trust?url={server_url}`,
      leaderboard: `${base}/api/leaderboard?category={category}&limit={n}`,
      servers: `${base}/api/servers?category={category}&limit={n}`,
      stats: `${base}/api/stats`,
      external_agents: `${base}/api/external-agents`,
      report: `${base}/api/report`,
      register: `${base}/api/register`,
      compliance: `${base}/api/compliance`,
      info: `${base}/api/info`,
      mcp: `${base}/mcp`,
      atlas_report: `${base}/atlas/report`,
      jwks: `${base}/.well-known/jwks.json`,
      openapi: `${base}/openapi.json`,
      health: `${base}/health`,
      ready: `${base}/ready`,
    },
    tools: MCP_TOOLS.map((t) => t.name),
    data_since: runtime.dataSince,
    operator: runtime.config.OPERATOR,
    region: runtime.config.REGION,
    mode: runtime.config.mode,
  };
}
