import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TOOLS } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';

const PUBLIC_BASE_URL = 'https://observatory.test';
/** Loopback targets: tests allow private networks, and nothing listens there (no probe runs). */
const TRACKED = 'http://127.0.0.1:9/mcp';
const UNTRACKED = 'http://127.0.0.1:9/never-seen';

/** A raw JSON-RPC POST, as an agent without the SDK would send it. */
function rpc(base: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const text = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;
// biome-ignore lint/suspicious/noExplicitAny: answers are JSON, checked field by field by the assertions
type JsonBody = any;
const json = async (res: Response): Promise<JsonBody> => res.json();

describe('MCP tools at /mcp over real HTTP', () => {
  let runtime: TestRuntime;
  let app: FastifyInstance;
  let base: string;
  let client: Client;

  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  /** A successful call: structured content, and the same JSON as text. */
  const ok = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    expect(result.isError, text(result)).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);
    return result.structuredContent as JsonBody;
  };

  /** A refused call: an isError result (never a protocol error), with a message. */
  const refused = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return text(result);
  };

  beforeAll(async () => {
    runtime = await createTestRuntime({ env: { PUBLIC_BASE_URL } });
    app = await buildApp(runtime, { logRequests: false });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    client = new Client({ name: 'observatory-test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    // listTools makes the client check every later structuredContent against the output schemas
    await client.listTools();
  });
  afterAll(async () => {
    await client?.close();
    await app?.close();
    await runtime?.close();
  });

  it('negotiates the SDK protocol version and names itself', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-trust-observatory', version: '1.0.0' });
    expect(client.getInstructions()).toContain('check_trust');
    const res = await rpc(base, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'raw', version: '0' },
      },
    });
    expect(res.status).toBe(200);
    expect((await json(res)).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('lists exactly the ten tools of /api/info, each with schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS.map((t) => t.name));
    for (const tool of tools) {
      const listed = MCP_TOOLS.find((t) => t.name === tool.name)!;
      expect(tool.description).toContain(listed.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof tool.annotations?.openWorldHint).toBe('boolean');
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('check_trust')?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
    });
    expect(byName.get('report_interaction')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    });
    expect(byName.get('register_server')?.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
    });
    expect(byName.get('check_trust')?.inputSchema.required).toEqual(['server_url']);
    expect(byName.get('report_interaction')?.inputSchema.required).toEqual(['server_url', 'success']);
  });

  it('report_interaction stores a report, refuses bad arguments', async () => {
    const stored = await ok('report_interaction', {
      server_url: TRACKED,
      success: true,
      latency_ms: 120,
      tool_name: 'search',
      agent_id: 'mcp-test-agent',
    });
    expect(stored).toMatchObject({ recorded: true, server_url: TRACKED, server_created: true });
    expect(stored.report_id).toMatch(/^rpt_/);

    expect(await refused('report_interaction', { server_url: TRACKED })).toMatch(/success/);
    expect(
      await refused('report_interaction', { server_url: TRACKED, success: false, error_type: 'gremlins' }),
    ).toMatch(/error_type.*|must be one of timeout/);
    expect(await refused('report_interaction', { server_url: 'ftp://example.com', success: true })).toMatch(
      /http or https/,
    );
  });

  it('check_trust answers a tracked server, says found:false for an untracked one, refuses a bad URL', async () => {
    const tracked = await ok('check_trust', { server_url: TRACKED });
    expect(tracked).toMatchObject({ found: true, server_url: TRACKED });
    expect(tracked.metrics).toHaveProperty('p95_latency_ms');

    const untracked = await ok('check_trust', { server_url: UNTRACKED });
    expect(untracked).toMatchObject({ found: false, trust_score: null, verdict: 'UNCERTAIN' });
    expect(untracked.message).toMatch(/not tracked/);

    expect(await refused('check_trust', { server_url: 'not a url' })).toMatch(/absolute URL|Invalid URL/);
    expect(await refused('check_trust', {})).toMatch(/server_url/);
  });

  it('get_leaderboard ranks servers within the REST limits', async () => {
    const board = await ok('get_leaderboard', {});
    expect(board).toMatchObject({ category: 'all' });
    expect(Array.isArray(board.servers)).toBe(true);
    expect(await ok('get_leaderboard', { category: 'weather', limit: 50 })).toMatchObject({
      category: 'weather',
    });

    expect(await refused('get_leaderboard', { limit: 51 })).toMatch(/at most 50/);
    expect(await refused('get_leaderboard', { limit: 0 })).toMatch(/at least 1/);
    expect(await refused('get_leaderboard', { category: 'astrology' })).toMatch(/must be one of/);
  });

  it('get_baselines describes a category, refuses an unknown one', async () => {
    const baseline = await ok('get_baselines', { category: 'Search' });
    expect(baseline).toMatchObject({ category: 'search' });
    expect(baseline.anomaly_rules).toHaveProperty('openZ');
    expect(await refused('get_baselines', {})).toMatch(/category/);
    expect(await refused('get_baselines', { category: 'astrology' })).toMatch(/must be one of/);
  });

  it('check_anomaly judges a tracked server; an untracked one is an error result', async () => {
    const result = await ok('check_anomaly', { server_url: TRACKED });
    expect(result).toMatchObject({ server_url: TRACKED, is_anomalous: false, anomalies: [] });
    expect(result.server_baselines.method).toMatch(/z-scores/);

    expect(await refused('check_anomaly', { server_url: UNTRACKED })).toMatch(/not tracked.*register_server/);
    expect(await refused('check_anomaly', { server_url: 42 })).toMatch(/server_url/);
  });

  it('register_server registers, updates on a second call, and refuses what REST refuses', async () => {
    const server = { server_url: 'http://127.0.0.1:9/registered', name: 'Registered', category: 'data' };
    expect(await ok('register_server', server)).toMatchObject({
      registered: true,
      updated: false,
      category: 'data',
      initial_trust_score: null,
    });
    expect(await ok('register_server', { ...server, description: 'Now described' })).toMatchObject({
      updated: true,
    });

    expect(await refused('register_server', { server_url: 'http://127.0.0.1:9/x' })).toMatch(/name/);
    expect(await refused('register_server', { ...server, github_url: 'http://github.com/x' })).toMatch(
      /https/,
    );
    expect(await refused('register_server', { server_url: `${PUBLIC_BASE_URL}/mcp`, name: 'Us' })).toMatch(
      /does not register or probe itself/,
    );
  });

  it('get_server_history gives one entry a day; an untracked server is an error result', async () => {
    const history = await ok('get_server_history', { server_url: TRACKED, days: 7 });
    expect(history.days).toHaveLength(7);
    expect(history.days[0]).toHaveProperty('date');
    expect(history.trend).toBe('insufficient_data');
    expect((await ok('get_server_history', { server_url: TRACKED })).days).toHaveLength(30);

    expect(await refused('get_server_history', { server_url: UNTRACKED })).toMatch(/not tracked/);
    expect(await refused('get_server_history', { server_url: TRACKED, days: 91 })).toMatch(/at most 90/);
    expect(await refused('get_server_history', { server_url: TRACKED, days: 1.5 })).toMatch(/whole number/);
  });

  it('observatory_stats counts what was recorded; it takes no arguments', async () => {
    const stats = await ok('observatory_stats', {});
    expect(stats.total_servers_tracked).toBeGreaterThanOrEqual(2);
    expect(stats.total_interactions_recorded).toBeGreaterThanOrEqual(1);
    expect(stats.data_collection_started).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(await refused('observatory_stats', { category: 'search' })).toMatch(/category/);
  });

  it('get_compliance_report pages the audit trail with its proofs, refuses bad filters', async () => {
    const trail = await ok('get_compliance_report', { server_url: TRACKED, limit: 10 });
    expect(trail.filters_applied).toMatchObject({ server_url: TRACKED, agent_id: null });
    expect(trail.total_records).toBeGreaterThanOrEqual(1);
    expect(trail.interactions[0]).toMatchObject({ event_type: 'report', agent_id: 'mcp-test-agent' });
    expect(trail.integrity.checkpoint.jws).toEqual(expect.any(String));
    expect((await ok('get_compliance_report', { agent_id: 'nobody' })).interactions).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(
      (await ok('get_compliance_report', { start_date: today, end_date: today })).total_records,
    ).toBeGreaterThanOrEqual(1);

    expect(await refused('get_compliance_report', { start_date: '22/11/2026' })).toMatch(/YYYY-MM-DD/);
    expect(await refused('get_compliance_report', { start_date: '2026-02-30' })).toMatch(/YYYY-MM-DD/);
    expect(await refused('get_compliance_report', { start_date: today, end_date: '2020-01-01' })).toMatch(
      /after end_date/,
    );
    expect(await refused('get_compliance_report', { cursor: 'not-ours' })).toMatch(/cursor/);
    expect(await refused('get_compliance_report', { limit: 5001 })).toMatch(/at most 5000/);
  });

  it('get_mica_attestation attests a tracked server, cannot attest an untracked one', async () => {
    const attestation = await ok('get_mica_attestation', { server_url: TRACKED });
    expect(attestation).toMatchObject({ attestation_status: 'ATTESTED', server_url: TRACKED });
    expect(['FULL', 'PARTIAL', 'NON_COMPLIANT']).toContain(attestation.compliance_grade);
    expect(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']).toContain(attestation.risk_level);
    expect(attestation.article_12_status).toHaveProperty('continuous_monitoring');
    expect(attestation.audit_export_url).toContain('/api/compliance?server_url=');
    expect(attestation.signature.jws.split('.')).toHaveLength(3);

    expect(await ok('get_mica_attestation', { server_url: UNTRACKED })).toMatchObject({
      attestation_status: 'CANNOT_ATTEST',
    });
    expect(await refused('get_mica_attestation', {})).toMatch(/server_url/);
  });

  it('keeps concurrent requests apart, though every client numbers its requests alike', async () => {
    const urls = Array.from({ length: 12 }, (_, i) => `http://127.0.0.1:9/concurrent-${i}`);
    const answers = await Promise.all(
      urls.map(async (url) =>
        json(
          await rpc(base, {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'check_trust', arguments: { server_url: url } },
          }),
        ),
      ),
    );
    answers.forEach((answer, i) => {
      expect(answer.id).toBe(1);
      expect(answer.result.structuredContent.server_url).toBe(urls[i]);
    });
  });

  it('answers an unknown tool with an error result', async () => {
    expect(await refused('delete_everything', {})).toMatch(/not found/);
  });

  it('refuses browser Origins that are neither ours nor loopback (DNS rebinding)', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const foreign = await rpc(base, list, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await json(foreign)).error.message).toMatch(/Origin/);
    expect((await rpc(base, list, { origin: 'null' })).status).toBe(403);

    for (const origin of [PUBLIC_BASE_URL, 'http://localhost:6274', 'http://127.0.0.1:3000']) {
      const res = await rpc(base, list, { origin });
      expect(res.status, origin).toBe(200);
      expect((await json(res)).result.tools).toHaveLength(10);
    }
  });

  it('answers GET and DELETE with 405 (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await json(res)).jsonrpc).toBe('2.0');
    }
  });

  it('answers malformed and oversized bodies with JSON-RPC errors', async () => {
    const malformed = await rpc(base, '{"jsonrpc": "2.0", "id": 1,');
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).error.code).toBe(-32700);

    const huge = await rpc(base, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'check_trust', arguments: { server_url: `https://example.com/${'a'.repeat(70_000)}` } },
    });
    expect(huge.status).toBe(413);
    expect((await json(huge)).error.message).toMatch(/too large/i);

    const notJson = await rpc(base, 'hello', { 'content-type': 'text/plain' });
    expect(notJson.status).toBe(415);
  });
});
