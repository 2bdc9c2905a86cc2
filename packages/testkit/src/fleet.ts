import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Behaviour, type ResolvedBehaviour, resolveBehaviour } from './behaviours.ts';
import { readBody, sendJson, sendText } from './http-helpers.ts';
import { type LeanServerState, respondLean } from './lean-mcp.responder.ts';
import { SdkLegacySessions, SdkSessions, serveStateless } from './sdk-mcp.servers.ts';

/**
 * A fleet of virtual MCP servers behind ONE node:http server on 127.0.0.1: server `<id>` lives
 * under `/s/<id>/` (Streamable HTTP at `/s/<id>/mcp`; legacy SSE at `/s/<id>/sse` with its
 * message endpoint at `/s/<id>/messages`). A fleet of thousands costs one port and a map entry each.
 */

export interface FleetOptions {
  /** Default 0: the OS picks a free port. */
  port?: number;
  /** Serve `healthy` through the SDK (stateless, JSON) instead of the lean responder. */
  sdkHealthy?: boolean;
  /** Seed of the `flaky` coin, so a run can be replayed. Default 1. */
  seed?: number;
}

export interface FleetServer {
  id: string;
  url: string;
}

export interface FleetStats {
  /** HTTP requests served by the whole fleet (stats requests excluded). */
  requests: number;
  perServer: Record<string, number>;
  /** Live SDK sessions (stateful servers); a prober that DELETEs its sessions leaves none. */
  openSessions: number;
}

export interface Fleet {
  readonly baseUrl: string;
  readonly port: number;
  add(behaviour: Behaviour, opts?: { id?: string }): FleetServer;
  remove(id: string): boolean;
  setBehaviour(id: string, behaviour: Behaviour): void;
  /** Gives server `id` a new tool list (and so a new tools hash); returns the new tool-set version. */
  changeTools(id: string): number;
  stats(): FleetStats;
  /** TCP connections open to the fleet right now (to check that clients close their sockets). */
  connections(): Promise<number>;
  close(): Promise<void>;
}

interface VirtualServer {
  id: string;
  behaviour: ResolvedBehaviour;
  toolsVersion: number;
  requests: number;
  sessions: SdkSessions;
  legacy: SdkLegacySessions;
}

/** mulberry32: a tiny seeded PRNG, enough for a reproducible flaky coin. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HTML_PAGE =
  '<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>';

/** Behaviours that are whole-server failures: they answer the same on every path. */
const NOT_MCP = new Set(['dead', 'hangs', 'auth', 'html', 'http-500', 'plain-ok', 'wrong-jsonrpc']);

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const servers = new Map<string, VirtualServer>();
  const random = seededRandom(options.seed ?? 1);
  let requests = 0;
  let nextId = 1;

  const httpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendText(res, 500, 'text/plain', `testkit error: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  httpServer.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen({ port: options.port ?? 0, host: '127.0.0.1', backlog: 4096 }, resolve);
  });
  const port = (httpServer.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
    const match = /^\/s\/([^/]+)\/([^/]+)$/.exec(path);
    const server = match ? servers.get(match[1]!) : undefined;
    if (!server) {
      sendText(res, 404, 'text/plain', 'Not Found');
      return;
    }
    requests += 1;
    server.requests += 1;
    const route = match![2]!;
    const behaviour = server.behaviour;
    if (NOT_MCP.has(behaviour.kind)) return serveNotMcp(server, req, res);
    if (behaviour.kind === 'legacy-sse') return serveLegacy(server, route, query, req, res);
    if (route !== 'mcp') {
      sendText(res, 404, 'text/plain', 'Not Found');
      return;
    }
    const sdk = { name: `testkit-${server.id}`, toolsVersion: server.toolsVersion, ping: true };
    switch (behaviour.kind) {
      case 'healthy':
        if (options.sdkHealthy) return serveStateless(req, res, { ...sdk, json: true });
        return respondLean(req, res, leanState(server));
      case 'healthy-sse':
        return serveStateless(req, res, { ...sdk, json: false });
      case 'no-ping':
        return serveStateless(req, res, { ...sdk, ping: false, json: true });
      case 'stateful':
        return server.sessions.handle(req, res, sdk);
      case 'changing-tools':
        return respondLean(req, res, changingState(server));
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
        if (res.destroyed) return;
        return respondLean(req, res, leanState(server));
      case 'flaky':
        if (random() < behaviour.failRate) {
          req.resume();
          sendText(res, 500, 'text/plain', 'flaky: failing this one');
          return;
        }
        return respondLean(req, res, leanState(server));
    }
  }

  function leanState(server: VirtualServer): LeanServerState {
    return { name: `testkit-${server.id}`, toolsVersion: server.toolsVersion };
  }

  /** The tool-set version is read only to answer tools/list, so each listing sees a new set. */
  function changingState(server: VirtualServer): LeanServerState {
    return {
      name: `testkit-${server.id}`,
      get toolsVersion() {
        server.toolsVersion += 1;
        return server.toolsVersion;
      },
    };
  }

  async function serveNotMcp(
    server: VirtualServer,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    switch (server.behaviour.kind) {
      case 'dead':
        req.socket.destroy();
        return;
      case 'hangs':
        req.resume();
        return;
      case 'auth': {
        req.resume();
        const metadata = `${baseUrl}/.well-known/oauth-protected-resource/s/${server.id}/mcp`;
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${metadata}"`,
          'content-type': 'application/json',
        });
        res.end('{"error":"invalid_token","error_description":"Missing bearer token"}');
        return;
      }
      case 'html':
        req.resume();
        return sendText(res, 200, 'text/html; charset=utf-8', HTML_PAGE);
      case 'http-500':
        req.resume();
        return sendText(res, 500, 'text/plain', 'Internal Server Error');
      case 'plain-ok':
        req.resume();
        return sendText(res, 200, 'text/plain', 'OK');
      case 'wrong-jsonrpc': {
        // Valid JSON-RPC around a result that is no InitializeResult.
        const text = (await readBody(req)) ?? '';
        let id: unknown = 1;
        try {
          id = (JSON.parse(text) as { id?: unknown }).id ?? 1;
        } catch {}
        return sendJson(res, 200, JSON.stringify({ jsonrpc: '2.0', id, result: { status: 'ok' } }));
      }
    }
  }

  async function serveLegacy(
    server: VirtualServer,
    route: string,
    query: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const sdk = { name: `testkit-${server.id}`, toolsVersion: server.toolsVersion, ping: true };
    if (route === 'messages' && req.method === 'POST') {
      return server.legacy.postMessage(req, res, new URLSearchParams(query).get('sessionId'));
    }
    if (route === 'sse' || route === 'mcp') {
      if (req.method === 'GET') return server.legacy.openStream(res, `/s/${server.id}/messages`, sdk);
      req.resume();
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    sendText(res, 404, 'text/plain', 'Not Found');
  }

  function get(id: string): VirtualServer {
    const server = servers.get(id);
    if (!server) throw new Error(`no fleet server ${id}`);
    return server;
  }

  return {
    baseUrl,
    port,
    add(behaviour, opts = {}) {
      const id = opts.id ?? `${nextId++}`;
      if (servers.has(id)) throw new Error(`fleet server ${id} already exists`);
      const resolved = resolveBehaviour(behaviour);
      servers.set(id, {
        id,
        behaviour: resolved,
        toolsVersion: 0,
        requests: 0,
        sessions: new SdkSessions(),
        legacy: new SdkLegacySessions(),
      });
      return { id, url: `${baseUrl}/s/${id}/${resolved.kind === 'legacy-sse' ? 'sse' : 'mcp'}` };
    },
    remove(id) {
      const server = servers.get(id);
      if (!server) return false;
      void server.sessions.closeAll();
      return servers.delete(id);
    },
    setBehaviour(id, behaviour) {
      get(id).behaviour = resolveBehaviour(behaviour);
    },
    changeTools(id) {
      const server = get(id);
      server.toolsVersion += 1;
      return server.toolsVersion;
    },
    stats() {
      const perServer: Record<string, number> = {};
      let openSessions = 0;
      for (const server of servers.values()) {
        perServer[server.id] = server.requests;
        openSessions += server.sessions.size;
      }
      return { requests, perServer, openSessions };
    },
    connections() {
      return new Promise((resolve, reject) =>
        httpServer.getConnections((err, count) => (err ? reject(err) : resolve(count))),
      );
    },
    async close() {
      await Promise.all([...servers.values()].map((server) => server.sessions.closeAll()));
      servers.clear();
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeAllConnections();
      await closed;
    },
  };
}

/** A URL on a port nothing listens on: bound once by the OS, then released. */
export async function deadUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}
