import {
  type InitializeResult,
  InitializeResultSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ProbeErrorType, ProbeOutcome, ProbeResult } from '@observatory/core';
import { parseCidrs } from './address-policy.ts';
import type { RpcReply } from './json-rpc.ts';
import { LegacySseChannel } from './legacy-sse.channel.ts';
import type { McpChannel } from './mcp-channel.ts';
import { ProbeDeadlineError, ProbeFailure, toProbeFailure } from './probe-failure.ts';
import { ProbeHttp } from './probe-http.ts';
import { PROBE_DEFAULTS, type ProbeOptions } from './probe-options.ts';
import { StreamableHttpChannel } from './streamable-http.channel.ts';
import { fingerprintTools } from './tools-hash.ts';

/** What a probe learned beyond the stored ProbeResult. */
export interface ProbeDetails {
  /** Where the MCP conversation happened: the URL after redirects, or the legacy message endpoint. */
  endpoint_url: string | null;
  redirects: number;
  /** Whether the server issued an Mcp-Session-Id (and so got a DELETE at the end). */
  session_issued: boolean;
  /** tools/list kept paging past the bounds; tools beyond them were not fetched or hashed. */
  tools_truncated: boolean;
}

/** Initialize-phase failures: which outcome each kind of failure stands for. */
const INITIALIZE_OUTCOME: Record<ProbeErrorType, ProbeOutcome> = {
  dns: 'down',
  connect: 'down',
  tls: 'down',
  timeout: 'down',
  http_5xx: 'down',
  ssrf_blocked: 'down',
  other: 'down',
  auth: 'auth_required',
  http_4xx: 'not_mcp',
  invalid_response: 'not_mcp',
  protocol_error: 'not_mcp',
  body_too_large: 'not_mcp',
  ping_failed: 'not_mcp',
  tools_list_failed: 'not_mcp',
};

/** Failures a later phase keeps as they are; anything else is reported as that phase failing. */
const KEPT_IN_LATER_PHASES = new Set<ProbeErrorType>(['timeout', 'body_too_large', 'ssrf_blocked']);

function emptyResult(startedAt: Date): ProbeResult {
  return {
    outcome: 'down',
    error_type: null,
    error_message: null,
    http_status: null,
    timings: { connect_ms: null, initialize_ms: null, ping_ms: null, tools_list_ms: null, total_ms: 0 },
    transport: null,
    protocol_version: null,
    server_info: null,
    tool_count: null,
    tools_hash: null,
    tools: null,
    auth_resource_metadata: null,
    started_at: startedAt,
  };
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

function fail(result: ProbeResult, outcome: ProbeOutcome, failure: ProbeFailure): void {
  result.outcome = outcome;
  result.error_type = failure.errorType;
  result.error_message = failure.message;
}

/**
 * Probes one MCP server with a real handshake: initialize, notifications/initialized, ping,
 * tools/list (paged), then DELETE of the session. Never throws: every way a server can fail is a
 * result. See README.md for the outcomes and the safety rules.
 */
export async function probe(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  return (await probeWithDetails(url, options)).result;
}

export async function probeWithDetails(
  url: string,
  options: ProbeOptions = {},
): Promise<{ result: ProbeResult; details: ProbeDetails }> {
  const started = performance.now();
  const run: ProbeRun = {
    result: emptyResult(new Date()),
    details: { endpoint_url: null, redirects: 0, session_issued: false, tools_truncated: false },
    deadlinePassed: false,
    channel: null,
  };

  let target: URL;
  try {
    target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('scheme');
  } catch {
    fail(run.result, 'down', new ProbeFailure('other', 'not an http(s) URL'));
    return run;
  }

  const timeoutMs = options.timeoutMs ?? PROBE_DEFAULTS.timeoutMs;
  const clientName = options.clientName ?? PROBE_DEFAULTS.clientName;
  const clientVersion = options.clientVersion ?? PROBE_DEFAULTS.clientVersion;
  const http = new ProbeHttp({
    policy: {
      allowPrivateNetworks: options.allowPrivateNetworks ?? false,
      allowedCidrs: parseCidrs(options.allowedCidrs ?? []),
    },
    lookup: options.lookup,
    timeoutMs,
    maxRedirects: options.maxRedirects ?? PROBE_DEFAULTS.maxRedirects,
    userAgent: `${clientName}/${clientVersion}`,
  });
  // The hard deadline: fails whatever is in flight, however slowly the server is trickling.
  const timer = setTimeout(() => {
    run.deadlinePassed = true;
    http.abort(new ProbeDeadlineError('probe deadline exceeded'));
  }, timeoutMs);
  try {
    await handshake(run, http, target, {
      maxBodyBytes: options.maxBodyBytes ?? PROBE_DEFAULTS.maxBodyBytes,
      clientInfo: { name: clientName, version: clientVersion },
    });
  } finally {
    run.result.timings.total_ms = round(performance.now() - started);
    // Cleanup after the clock stops: ending the session is not part of the server's latency.
    await run.channel?.close();
    clearTimeout(timer);
    await http.close();
  }
  return { result: run.result, details: run.details };
}

/** The state one probe builds up as it goes. */
interface ProbeRun {
  result: ProbeResult;
  details: ProbeDetails;
  deadlinePassed: boolean;
  channel: McpChannel | null;
}

async function handshake(
  run: ProbeRun,
  http: ProbeHttp,
  target: URL,
  config: { maxBodyBytes: number; clientInfo: { name: string; version: string } },
): Promise<void> {
  const { result, details } = run;

  // Initialize: any failure here decides the outcome on its own.
  const initStarted = performance.now();
  let init: { channel: McpChannel; reply: RpcReply };
  try {
    init = await initialize(http, target, config.maxBodyBytes, config.clientInfo);
  } catch (err) {
    const failure = toProbeFailure(err, run.deadlinePassed);
    fail(result, INITIALIZE_OUTCOME[failure.errorType], failure);
    result.http_status = failure.httpStatus ?? http.lastStatus;
    result.auth_resource_metadata = failure.authResourceMetadata;
    return;
  } finally {
    result.timings.connect_ms = http.connectMs === null ? null : round(http.connectMs);
    details.redirects = http.redirects;
  }
  const channel = init.channel;
  run.channel = channel;
  result.timings.initialize_ms = round(performance.now() - Math.max(initStarted, http.connectedAt ?? 0));
  result.http_status = channel.initializeStatus;
  details.endpoint_url = channel.endpoint.toString();
  details.session_issued = channel.hasSession;

  const initResult = checkInitializeReply(init.reply);
  if (initResult instanceof ProbeFailure) {
    fail(result, 'not_mcp', initResult);
    return;
  }
  result.transport = channel.transport;
  result.protocol_version = initResult.protocolVersion;
  result.server_info = { name: initResult.serverInfo.name, version: initResult.serverInfo.version };
  if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(initResult.protocolVersion)) {
    // It speaks MCP, but a version we cannot talk: the spec says disconnect.
    const message = `server chose unsupported protocol version ${initResult.protocolVersion}`;
    fail(result, 'degraded', new ProbeFailure('protocol_error', message));
    return;
  }
  channel.setProtocolVersion(initResult.protocolVersion);

  // Later phases: each failure makes the server degraded; the first one is reported, and the
  // phases after it still run, so a server without ping still gets its tools fingerprinted.
  let firstFailure: ProbeFailure | null = null;
  const phase = async (
    label: string,
    errorType: ProbeErrorType,
    body: () => Promise<void>,
  ): Promise<void> => {
    try {
      await body();
    } catch (err) {
      const failure = toProbeFailure(err, run.deadlinePassed);
      firstFailure ??= KEPT_IN_LATER_PHASES.has(failure.errorType)
        ? failure
        : new ProbeFailure(errorType, `${label}: ${failure.message}`);
    }
  };

  await phase('notifications/initialized', 'protocol_error', () =>
    channel.notify('notifications/initialized'),
  );
  await phase('ping', 'ping_failed', async () => {
    const pingStarted = performance.now();
    const reply = await channel.request('ping');
    result.timings.ping_ms = round(performance.now() - pingStarted);
    if (reply.kind === 'error') throw rpcErrorFailure('ping_failed', reply);
  });
  await phase('tools/list', 'tools_list_failed', async () => {
    if (initResult.capabilities.tools === undefined) {
      // No tools capability: an empty tool list is the honest fingerprint.
      Object.assign(result, toolFields([]));
      return;
    }
    const listStarted = performance.now();
    const listed = await listTools(channel);
    result.timings.tools_list_ms = round(performance.now() - listStarted);
    details.tools_truncated = listed.truncated;
    Object.assign(result, toolFields(listed.tools));
  });

  if (firstFailure) fail(result, 'degraded', firstFailure);
  else result.outcome = 'up';
}

/** Initialize over Streamable HTTP, or over legacy HTTP+SSE when POST is refused with 404/405. */
async function initialize(
  http: ProbeHttp,
  target: URL,
  maxBodyBytes: number,
  clientInfo: { name: string; version: string },
): Promise<{ channel: McpChannel; reply: RpcReply }> {
  const params = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo };
  const streamable = new StreamableHttpChannel(http, target, maxBodyBytes);
  try {
    return { channel: streamable, reply: await streamable.initialize(params) };
  } catch (err) {
    const refusedPost = err instanceof ProbeFailure && (err.httpStatus === 404 || err.httpStatus === 405);
    if (!refusedPost || err.errorType !== 'http_4xx') throw err;
    // POST refused: maybe a server that only speaks the legacy HTTP+SSE transport.
    try {
      const legacy = await LegacySseChannel.open(http, streamable.endpoint, maxBodyBytes);
      return { channel: legacy, reply: await legacy.request('initialize', params) };
    } catch (legacyErr) {
      if (!(legacyErr instanceof ProbeFailure)) throw legacyErr;
      const message = `POST answered HTTP ${err.httpStatus}; legacy SSE: ${legacyErr.message}`;
      throw new ProbeFailure(
        legacyErr.errorType,
        message,
        legacyErr.httpStatus,
        legacyErr.authResourceMetadata,
      );
    }
  }
}

function rpcErrorFailure(errorType: ProbeErrorType, reply: { code: number; message: string }): ProbeFailure {
  return new ProbeFailure(errorType, `JSON-RPC error ${reply.code}: ${reply.message}`);
}

/** The initialize result, validated with the SDK's schema, or why it is not one. */
function checkInitializeReply(reply: RpcReply): InitializeResult | ProbeFailure {
  if (reply.kind === 'error') return rpcErrorFailure('protocol_error', reply);
  const parsed = InitializeResultSchema.safeParse(reply.result);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'result';
  return new ProbeFailure(
    'protocol_error',
    `not an MCP initialize result (${where}: ${issue?.message ?? 'invalid'})`,
  );
}

async function listTools(channel: McpChannel): Promise<{ tools: Tool[]; truncated: boolean }> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < PROBE_DEFAULTS.maxToolPages; page++) {
    const reply = await channel.request('tools/list', cursor === undefined ? undefined : { cursor });
    if (reply.kind === 'error') throw rpcErrorFailure('tools_list_failed', reply);
    const parsed = ListToolsResultSchema.safeParse(reply.result);
    if (!parsed.success)
      throw new ProbeFailure('tools_list_failed', 'tools/list result is not a valid MCP tool list');
    tools.push(...parsed.data.tools);
    cursor = parsed.data.nextCursor;
    if (cursor === undefined) return { tools, truncated: false };
    if (tools.length >= PROBE_DEFAULTS.maxTools) break;
  }
  return { tools: tools.slice(0, PROBE_DEFAULTS.maxTools), truncated: true };
}

function toolFields(tools: readonly Tool[]): Pick<ProbeResult, 'tool_count' | 'tools_hash' | 'tools'> {
  const fingerprint = fingerprintTools(tools);
  return { tool_count: tools.length, tools_hash: fingerprint.toolsHash, tools: fingerprint.tools };
}
