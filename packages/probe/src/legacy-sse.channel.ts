import type { EventSourceMessage } from 'eventsource-parser';
import { sseEvents } from './body-reader.ts';
import { failureForStatus } from './http-status.ts';
import { eventPayload, findResponse, notificationBody, type RpcReply, requestBody } from './json-rpc.ts';
import type { McpChannel } from './mcp-channel.ts';
import { ProbeFailure } from './probe-failure.ts';
import { type HttpReply, headerValue, type ProbeHttp } from './probe-http.ts';

interface Waiter {
  resolve: (reply: RpcReply) => void;
  reject: (err: unknown) => void;
}

/**
 * MCP over the legacy HTTP+SSE transport (protocol 2024-11-05): a GET opens an event stream whose
 * first `endpoint` event names where to POST messages; every answer comes back on that stream.
 */
export class LegacySseChannel implements McpChannel {
  readonly transport = 'sse';
  readonly hasSession = false;
  initializeStatus: number | null;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiter>();
  private streamError: unknown = null;
  private streamOpen = true;

  private constructor(
    private readonly http: ProbeHttp,
    private readonly stream: HttpReply,
    readonly endpoint: URL,
    events: AsyncGenerator<EventSourceMessage>,
  ) {
    this.initializeStatus = stream.status;
    void this.pump(events);
  }

  /** Opens the stream and waits for the `endpoint` event. */
  static async open(http: ProbeHttp, url: URL, maxBodyBytes: number): Promise<LegacySseChannel> {
    const stream = await http.sendFollowingRedirects(
      url,
      'GET',
      { accept: 'text/event-stream' },
      undefined,
      'stream',
    );
    if (stream.status < 200 || stream.status >= 300) {
      await stream.body.dump();
      throw failureForStatus(stream.status, stream.headers);
    }
    const contentType = (headerValue(stream.headers, 'content-type') ?? '').toLowerCase();
    if (!contentType.startsWith('text/event-stream')) {
      await stream.body.dump();
      throw new ProbeFailure(
        'invalid_response',
        `GET answered ${contentType || 'no content-type'}, not an event stream`,
        stream.status,
      );
    }
    const events = sseEvents(stream.body, maxBodyBytes);
    for (;;) {
      const next = await events.next();
      if (next.done) {
        throw new ProbeFailure(
          'invalid_response',
          'event stream ended before its endpoint event',
          stream.status,
        );
      }
      if (next.value.event !== 'endpoint') continue;
      let endpoint: URL;
      try {
        endpoint = new URL(next.value.data.trim(), stream.url);
      } catch {
        throw new ProbeFailure('invalid_response', 'endpoint event is not a URL', stream.status);
      }
      if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
        throw new ProbeFailure(
          'invalid_response',
          `endpoint event names a ${endpoint.protocol} URL`,
          stream.status,
        );
      }
      return new LegacySseChannel(http, stream, endpoint, events);
    }
  }

  /** Hands each response on the stream to the request waiting for its id. */
  private async pump(events: AsyncGenerator<EventSourceMessage>): Promise<void> {
    try {
      for await (const event of events) {
        const payload = eventPayload(event);
        const id = (payload as { id?: unknown } | null)?.id;
        const waiter = typeof id === 'number' ? this.waiting.get(id) : undefined;
        if (!waiter || typeof id !== 'number') continue;
        this.waiting.delete(id);
        try {
          const reply = findResponse(payload, id);
          if (reply) waiter.resolve(reply);
          else waiter.reject(new ProbeFailure('invalid_response', `no response to request ${id}`));
        } catch (err) {
          waiter.reject(err);
        }
      }
    } catch (err) {
      this.streamError = err;
    } finally {
      this.streamOpen = false;
      for (const waiter of this.waiting.values()) waiter.reject(this.closedFailure());
      this.waiting.clear();
    }
  }

  private closedFailure(): unknown {
    return (
      this.streamError ?? new ProbeFailure('invalid_response', 'event stream closed before the response')
    );
  }

  async request(method: string, params?: Record<string, unknown>): Promise<RpcReply> {
    if (!this.streamOpen) throw this.closedFailure();
    const id = ++this.nextId;
    const answer = new Promise<RpcReply>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    // The answer may settle (stream closed) before we get to await it.
    answer.catch(() => {});
    await this.post(requestBody(id, method, params), method === 'initialize').catch((err: unknown) => {
      this.waiting.delete(id);
      throw err;
    });
    return answer;
  }

  async notify(method: string): Promise<void> {
    await this.post(notificationBody(method), false);
  }

  private async post(body: string, isInitialize: boolean): Promise<void> {
    const reply = await this.http.send(this.endpoint, 'POST', { 'content-type': 'application/json' }, body);
    if (isInitialize) this.initializeStatus = reply.status;
    await reply.body.dump();
    if (reply.status < 200 || reply.status >= 300) throw failureForStatus(reply.status, reply.headers);
  }

  setProtocolVersion(): void {
    // The legacy transport has no version header; the version lives in the initialize result only.
  }

  async close(): Promise<void> {
    this.stream.body.destroy();
  }
}
