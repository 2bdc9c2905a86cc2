import type { IncomingMessage, ServerResponse } from 'node:http';

export const MAX_REQUEST_BODY = 1024 * 1024;

/** The request body as text, or null when it is larger than `max` bytes. */
export async function readBody(req: IncomingMessage, max = MAX_REQUEST_BODY): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

export function sendText(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  sendText(res, status, 'application/json', body);
}

export function jsonRpcError(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });
}
