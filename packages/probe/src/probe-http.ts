import type { IncomingHttpHeaders } from 'node:http';
import { type buildConnector, Client, type Dispatcher } from 'undici';
import type { AddressPolicy } from './address-policy.ts';
import { ProbeFailure } from './probe-failure.ts';
import type { LookupFunction } from './probe-options.ts';
import { createGuardedConnector } from './ssrf-guard.ts';

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData['body'];
  /** The URL that produced this reply (after any redirects). */
  url: URL;
}

export interface ProbeHttpOptions {
  policy: AddressPolicy;
  lookup: LookupFunction | undefined;
  timeoutMs: number;
  maxRedirects: number;
  userAgent: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Ends a probe's connections. One shared instance: undici's destroy() otherwise builds a fresh
 * error per client and Node formats its stack when the socket closes, a measurable share of a
 * probe's CPU, for an error nobody reads.
 */
const PROBE_FINISHED = new Error('probe finished');

/**
 * The HTTP side of one probe: private undici Clients (one per origin, plus one for a legacy SSE
 * stream, which holds its connection open) whose every socket goes through the SSRF guard.
 * Nothing is shared between probes (a fresh connection per probe, as probing distinct hosts
 * does); `abort()` fails everything in flight at the deadline and `close()` destroys every socket.
 */
export class ProbeHttp {
  private readonly clients = new Map<string, Client>();
  private readonly connect: buildConnector.connector;
  private aborted: Error | null = null;
  /** Time to open the probe's first socket (DNS + TCP + TLS), and the moment it was ready. */
  connectMs: number | null = null;
  connectedAt: number | null = null;
  redirects = 0;
  /** Status of the latest response, whatever it was. */
  lastStatus: number | null = null;

  constructor(private readonly options: ProbeHttpOptions) {
    this.connect = createGuardedConnector({
      policy: options.policy,
      lookup: options.lookup,
      timeoutMs: options.timeoutMs,
      onConnected: (ms) => {
        if (this.connectMs !== null) return;
        this.connectMs = ms;
        this.connectedAt = performance.now();
      },
    });
  }

  private client(origin: string, lane: 'main' | 'stream'): Client {
    const key = lane === 'main' ? origin : `${lane} ${origin}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new Client(origin, {
        connect: this.connect,
        // Idle timeouts catch silent peers early; the deadline timer (abort) is the hard limit
        // that also catches answers trickling in just fast enough to dodge them.
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  async send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body?: string,
    lane: 'main' | 'stream' = 'main',
  ): Promise<HttpReply> {
    if (this.aborted) throw this.aborted;
    const res = await this.client(url.origin, lane).request({
      path: url.pathname + url.search,
      method: method as Dispatcher.HttpMethod,
      headers: { 'user-agent': this.options.userAgent, ...headers },
      body: body ?? null,
    });
    this.lastStatus = res.statusCode;
    return { status: res.statusCode, headers: res.headers, body: res.body, url };
  }

  /**
   * `send`, following up to `maxRedirects` redirects by re-sending the same request to the new
   * location (MCP endpoints redirect for trailing slashes and host moves; turning a POST into a
   * GET would make no sense here). Each hop opens its own guarded connection, so a public host
   * redirecting to a private address is refused at connect time like any other.
   */
  async sendFollowingRedirects(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body?: string,
    lane: 'main' | 'stream' = 'main',
  ): Promise<HttpReply> {
    let current = url;
    for (;;) {
      const reply = await this.send(current, method, headers, body, lane);
      const location = headerValue(reply.headers, 'location');
      if (!REDIRECT_STATUSES.has(reply.status) || location === undefined) return reply;
      await reply.body.dump();
      if (this.redirects >= this.options.maxRedirects) {
        throw new ProbeFailure(
          'invalid_response',
          `more than ${this.options.maxRedirects} redirects`,
          reply.status,
        );
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new ProbeFailure('invalid_response', 'redirect to an invalid URL', reply.status);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new ProbeFailure('invalid_response', `redirect to a ${next.protocol} URL`, reply.status);
      }
      this.redirects += 1;
      current = next;
    }
  }

  /** Fails every request and body in flight with `reason` (the probe's deadline). */
  abort(reason: Error): void {
    this.aborted = reason;
    for (const client of this.clients.values()) void client.destroy(reason);
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.destroy(PROBE_FINISHED)));
  }
}
