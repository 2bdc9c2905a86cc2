import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProbeOptions, probe, probeWithDetails } from '../src/index.ts';

// Every testkit behaviour, probed for real over loopback, lands in the right outcome.

let fleet: Fleet;
const local: ProbeOptions = { allowPrivateNetworks: true, timeoutMs: 5_000 };

beforeAll(async () => {
  fleet = await startFleet();
});
afterAll(async () => {
  await fleet?.close();
});

describe('probe classifies every testkit behaviour', () => {
  it('healthy (lean JSON responder) is up with tools fingerprinted', async () => {
    const { id, url } = fleet.add('healthy');
    const result = await probe(url, local);
    expect(result).toMatchObject({
      outcome: 'up',
      error_type: null,
      error_message: null,
      http_status: 200,
      transport: 'streamable_http',
      protocol_version: LATEST_PROTOCOL_VERSION,
      server_info: { name: `testkit-${id}`, version: '1.0.0' },
      tool_count: 2,
      auth_resource_metadata: null,
    });
    expect(result.tools_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(result.tools?.map((t) => t.name)).toEqual(['add', 'echo']);
    for (const phase of ['connect_ms', 'initialize_ms', 'ping_ms', 'tools_list_ms'] as const) {
      expect(result.timings[phase]).toBeTypeOf('number');
    }
    expect(result.timings.total_ms).toBeGreaterThan(0);
    expect(result.started_at).toBeInstanceOf(Date);
  });

  it('healthy-sse (event-stream answers) is up with the same tools as healthy', async () => {
    const healthy = await probe(fleet.add('healthy').url, local);
    const sse = await probe(fleet.add('healthy-sse').url, local);
    expect(sse).toMatchObject({ outcome: 'up', transport: 'streamable_http', tool_count: 2 });
    expect(sse.tools_hash).toBe(healthy.tools_hash);
  });

  it('stateful is up, and its session is DELETEd at the end', async () => {
    const { result, details } = await probeWithDetails(fleet.add('stateful').url, local);
    expect(result.outcome).toBe('up');
    expect(details.session_issued).toBe(true);
    expect(fleet.stats().openSessions).toBe(0);
  });

  it('legacy-sse falls back to the HTTP+SSE transport and is up', async () => {
    const result = await probe(fleet.add('legacy-sse').url, local);
    expect(result).toMatchObject({ outcome: 'up', transport: 'sse', tool_count: 2, error_type: null });
  });

  it('legacy-sse behind a /mcp URL (POST refused with 405) is found through GET', async () => {
    const { id, url } = fleet.add('healthy');
    fleet.setBehaviour(id, 'legacy-sse');
    const { result, details } = await probeWithDetails(url, local);
    expect(result).toMatchObject({ outcome: 'up', transport: 'sse' });
    expect(details.endpoint_url).toContain(`/s/${id}/messages?sessionId=`);
  });

  it('no-ping is degraded with ping_failed, and still lists its tools', async () => {
    const result = await probe(fleet.add('no-ping').url, local);
    expect(result).toMatchObject({ outcome: 'degraded', error_type: 'ping_failed', tool_count: 2 });
    expect(result.error_message).toContain('-32601');
    expect(result.timings.tools_list_ms).toBeTypeOf('number');
  });

  it('changing-tools shows a new tools hash on every probe', async () => {
    const { url } = fleet.add('changing-tools');
    const first = await probe(url, local);
    const second = await probe(url, local);
    expect(first.outcome).toBe('up');
    expect(second.tools_hash).not.toBe(first.tools_hash);
  });

  it('changeTools() changes the hash and the per-tool hashes say what changed', async () => {
    const { id, url } = fleet.add('healthy');
    const before = await probe(url, local);
    fleet.changeTools(id);
    const after = await probe(url, local);
    expect(after.tools_hash).not.toBe(before.tools_hash);
    const hashes = (r: typeof before) => Object.fromEntries((r.tools ?? []).map((t) => [t.name, t.hash]));
    expect(hashes(after).add).toBe(hashes(before).add);
    expect(hashes(after).echo).not.toBe(hashes(before).echo);
    expect(hashes(after).release_v1).toBeDefined();
  });

  it('slow is up when it answers within the deadline and down/timeout when not', async () => {
    const { url } = fleet.add({ kind: 'slow', delayMs: 300 });
    expect((await probe(url, local)).outcome).toBe('up');
    const late = await probe(url, { ...local, timeoutMs: 150 });
    expect(late).toMatchObject({ outcome: 'down', error_type: 'timeout' });
  });

  it('flaky fails with a 500 as often as told', async () => {
    const always = await probe(fleet.add({ kind: 'flaky', failRate: 1 }).url, local);
    expect(always).toMatchObject({ outcome: 'down', error_type: 'http_5xx', http_status: 500 });
    const never = await probe(fleet.add({ kind: 'flaky', failRate: 0 }).url, local);
    expect(never.outcome).toBe('up');
  });

  it('dead (connection dropped) and a closed port are down/connect', async () => {
    const dropped = await probe(fleet.add('dead').url, local);
    expect(dropped).toMatchObject({ outcome: 'down', error_type: 'connect' });
    const refused = await probe(await deadUrl(), local);
    expect(refused).toMatchObject({ outcome: 'down', error_type: 'connect', http_status: null });
    expect(refused.timings.connect_ms).toBeNull();
  });

  it('hangs is down/timeout at the deadline', async () => {
    const result = await probe(fleet.add('hangs').url, { ...local, timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'down', error_type: 'timeout', http_status: null });
    expect(result.error_message).toBe('probe deadline exceeded');
  });

  it('auth is auth_required with the resource_metadata URL', async () => {
    const { id, url } = fleet.add('auth');
    const result = await probe(url, local);
    expect(result).toMatchObject({ outcome: 'auth_required', error_type: 'auth', http_status: 401 });
    expect(result.auth_resource_metadata).toBe(
      `${fleet.baseUrl}/.well-known/oauth-protected-resource/s/${id}/mcp`,
    );
  });

  it.each([
    ['html', 'invalid_response'],
    ['plain-ok', 'invalid_response'],
    ['wrong-jsonrpc', 'protocol_error'],
  ] as const)('%s is not_mcp (%s), never up', async (behaviour, errorType) => {
    const result = await probe(fleet.add(behaviour).url, local);
    expect(result).toMatchObject({
      outcome: 'not_mcp',
      error_type: errorType,
      http_status: 200,
      transport: null,
    });
  });

  it('http-500 is down/http_5xx', async () => {
    const result = await probe(fleet.add('http-500').url, local);
    expect(result).toMatchObject({ outcome: 'down', error_type: 'http_5xx', http_status: 500 });
  });

  it('a 404 on both transports is not_mcp/http_4xx', async () => {
    const result = await probe(`${fleet.baseUrl}/nothing/here`, local);
    expect(result).toMatchObject({ outcome: 'not_mcp', error_type: 'http_4xx', http_status: 404 });
    expect(result.error_message).toContain('legacy SSE');
  });

  it('follows a server flipped healthy → slow → healthy', async () => {
    const { id, url } = fleet.add('healthy');
    expect((await probe(url, local)).outcome).toBe('up');
    fleet.setBehaviour(id, { kind: 'slow', delayMs: 1_000 });
    expect((await probe(url, { ...local, timeoutMs: 200 })).error_type).toBe('timeout');
    fleet.setBehaviour(id, 'healthy');
    expect((await probe(url, local)).outcome).toBe('up');
  });
});

describe('probe hygiene', () => {
  it('leaves no socket open once probes have finished', async () => {
    const urls = [
      fleet.add('healthy').url,
      fleet.add('stateful').url,
      fleet.add('legacy-sse').url,
      fleet.add('hangs').url,
    ];
    await Promise.all(urls.map((url) => probe(url, { ...local, timeoutMs: 300 })));
    // The server notices closed sockets on its next turn of the event loop; wait (bounded) for it.
    let open = await fleet.connections();
    for (let i = 0; i < 50 && open > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      open = await fleet.connections();
    }
    expect(open).toBe(0);
  });

  it('opens a fresh connection for every probe', async () => {
    const { url } = fleet.add('healthy');
    const results = await Promise.all([probe(url, local), probe(url, local), probe(url, local)]);
    for (const result of results) expect(result.timings.connect_ms).toBeTypeOf('number');
  });
});
