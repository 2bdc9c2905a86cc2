import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A bare HTTP server on loopback, for shapes of answer the testkit fleet does not offer. */
export interface RawServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startRawServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
  host = '127.0.0.1',
): Promise<RawServer> {
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    handler(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const INITIALIZE_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: {} },
  serverInfo: { name: 'raw', version: '0.1.0' },
};

/** Answers each JSON-RPC request with whatever `answer` returns for it (JSON, status 200). */
export function jsonRpcHandler(
  answer: (message: { id?: number; method: string; params?: Record<string, unknown> }) => unknown,
) {
  return (_req: IncomingMessage, res: ServerResponse, body: string) => {
    const message = JSON.parse(body) as { id?: number; method: string };
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer(message)));
  };
}
