import { MCP_POST_HEADERS, notificationBody, type RpcReply, readRpcReply, requestBody } from './json-rpc.ts';
import type { McpChannel } from './mcp-channel.ts';
import { headerValue, type ProbeHttp } from './probe-http.ts';

/** MCP over Streamable HTTP: every message is a POST; answers come as JSON or an event stream. */
export class StreamableHttpChannel implements McpChannel {
  readonly transport = 'streamable_http';
  initializeStatus: number | null = null;
  endpoint: URL;
  private nextId = 0;
  private sessionId: string | null = null;
  private protocolVersion: string | null = null;

  constructor(
    private readonly http: ProbeHttp,
    url: URL,
    private readonly maxBodyBytes: number,
  ) {
    this.endpoint = url;
  }

  get hasSession(): boolean {
    return this.sessionId !== null;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { ...MCP_POST_HEADERS };
    if (this.sessionId !== null) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== null) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /** The first exchange: the only one that follows redirects, and the one that learns the session. */
  async initialize(params: Record<string, unknown>): Promise<RpcReply> {
    const id = ++this.nextId;
    const body = requestBody(id, 'initialize', params);
    const reply = await this.http.sendFollowingRedirects(this.endpoint, 'POST', this.headers(), body);
    this.endpoint = reply.url;
    this.initializeStatus = reply.status;
    const session = headerValue(reply.headers, 'mcp-session-id');
    if (session) this.sessionId = session;
    return readRpcReply(reply, id, this.maxBodyBytes);
  }

  async request(method: string, params?: Record<string, unknown>): Promise<RpcReply> {
    const id = ++this.nextId;
    const reply = await this.http.send(
      this.endpoint,
      'POST',
      this.headers(),
      requestBody(id, method, params),
    );
    return readRpcReply(reply, id, this.maxBodyBytes);
  }

  async notify(method: string): Promise<void> {
    const reply = await this.http.send(this.endpoint, 'POST', this.headers(), notificationBody(method));
    await reply.body.dump();
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async close(): Promise<void> {
    if (this.sessionId === null) return;
    try {
      const headers = this.headers();
      delete headers['content-type'];
      const reply = await this.http.send(this.endpoint, 'DELETE', headers);
      await reply.body.dump();
    } catch {
      // Best effort: a server that cannot end its session loses nothing we measure.
    }
  }
}
