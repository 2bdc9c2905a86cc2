import type { RpcReply } from './json-rpc.ts';

/** One MCP conversation over one transport, as the handshake sees it. */
export interface McpChannel {
  readonly transport: 'streamable_http' | 'sse';
  /** Last HTTP status seen while sending `initialize`. */
  readonly initializeStatus: number | null;
  /** Where messages go after redirects (or the legacy message endpoint). */
  readonly endpoint: URL;
  /** Whether the server issued an Mcp-Session-Id. */
  readonly hasSession: boolean;
  request(method: string, params?: Record<string, unknown>): Promise<RpcReply>;
  notify(method: string): Promise<void>;
  /** The version agreed in initialize, sent as MCP-Protocol-Version from now on. */
  setProtocolVersion(version: string): void;
  /** Ends the conversation politely (DELETE the session / close the stream); never throws. */
  close(): Promise<void>;
}
