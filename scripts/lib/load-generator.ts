import { randomBytes } from 'node:crypto';

/**
 * Paced load on the observatory API (loopback only): agent reports, trust reads and agent
 * queries, each at its own bounded rate. Every request and its answer go into a ledger, so a
 * test can reconcile what was sent and acknowledged with what was stored.
 */

export type Kind = 'report' | 'read' | 'query';

export interface LedgerEntry {
  kind: Kind;
  /** Reports: the marker sent as tool_name, to find the row again whatever the answer. */
  marker?: string;
  sentAt: number;
  answeredAt: number;
  /** HTTP status, or 0 when no answer came (connection refused/reset, timeout). */
  status: number;
  contentType: string;
  /** 202 reports: report_id; 200 queries: receipt_id. */
  id?: string;
  error?: string;
}

export interface LoadOptions {
  apiUrl: string;
  serverUrls: string[];
  apiKey?: string;
  /** Requests per second of each kind (0 = none). */
  rates: Partial<Record<Kind, number>>;
  /** Per-request deadline; an answer slower than this is recorded as status 0. */
  timeoutMs?: number;
  /** agent_id of the reports, so they can be told apart from any others (default 'load-generator'). */
  agentId?: string;
}

export class LoadGenerator {
  readonly ledger: LedgerEntry[] = [];
  private readonly run = randomBytes(3).toString('hex');
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private seq = 0;

  constructor(private readonly options: LoadOptions) {
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(options.apiUrl)) throw new Error('load goes to 127.0.0.1 only');
  }

  start(): this {
    for (const [kind, rate] of Object.entries(this.options.rates) as Array<[Kind, number]>) {
      if (!rate) continue;
      this.timers.push(setInterval(() => this.fire(kind), 1000 / rate));
    }
    return this;
  }

  /** Stops sending and waits for every request in flight to be answered. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
    await Promise.allSettled([...this.inFlight]);
  }

  private fire(kind: Kind) {
    const n = this.seq++;
    const server = this.options.serverUrls[n % this.options.serverUrls.length]!;
    const p = this.send(kind, n, server).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async send(kind: Kind, n: number, server: string): Promise<void> {
    const { apiUrl, apiKey, timeoutMs = 10_000 } = this.options;
    const marker = kind === 'report' ? `load-${this.run}-${n}` : undefined;
    const request: { url: string; init: RequestInit } =
      kind === 'report'
        ? {
            url: `${apiUrl}/api/report`,
            init: {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                server_url: server,
                success: n % 5 !== 0,
                latency_ms: 20 + (n % 50),
                tool_name: marker,
                agent_id: this.options.agentId ?? 'load-generator',
              }),
            },
          }
        : kind === 'read'
          ? { url: `${apiUrl}/api/trust?url=${encodeURIComponent(server)}`, init: {} }
          : {
              url: `${apiUrl}/agent-query/${encodeURIComponent(server)}`,
              init: { headers: { authorization: `Bearer ${apiKey}` } },
            };
    const entry: LedgerEntry = {
      kind,
      ...(marker ? { marker } : {}),
      sentAt: Date.now(),
      answeredAt: 0,
      status: 0,
      contentType: '',
    };
    try {
      const res = await fetch(request.url, { ...request.init, signal: AbortSignal.timeout(timeoutMs) });
      entry.status = res.status;
      entry.contentType = res.headers.get('content-type') ?? '';
      const body = (await res.json().catch(() => ({}))) as { report_id?: string; receipt_id?: string };
      const id = kind === 'report' ? body.report_id : kind === 'query' ? body.receipt_id : undefined;
      if (id) entry.id = id;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      entry.error = `${(err as Error).message}${cause ? `: ${cause.code ?? cause.message}` : ''}`;
    }
    entry.answeredAt = Date.now();
    this.ledger.push(entry);
  }
}

/** Counts of a ledger by kind and status, e.g. { 'report 202': 40, 'report 503': 7 }, for messages. */
export function tally(entries: LedgerEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    const key = `${e.kind} ${e.status}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
