import type { TrustAssessment } from '@observatory/core';
import type { ServerRow } from '@observatory/db';
import type { AgentKeysService } from '../agents/agent-keys.service.ts';
import type { ServerStats, TrustInputsSnapshot } from '../analysis/server-analysis.ts';
import { evaluateTrust } from '../analysis/trust-evaluation.ts';
import type { ReceiptsService } from '../receipts/receipts.service.ts';
import type { Runtime } from '../runtime.ts';
import type { ServerResolver } from '../servers/server-resolver.ts';
import type { BaselinesCache } from './baselines-cache.ts';

/** A server row with the analyzer's JSON columns typed. */
export type AnalyzedServerRow = ServerRow & {
  trust_inputs: TrustInputsSnapshot | null;
  stats: ServerStats | null;
  trust_score: number | null;
  trust_verdict: string | null;
  analyzed_at: Date | null;
};

const FIND_CACHE_MS = 1_000;
const FIND_CACHE_SIZE = 10_000;
/** From this age on, asking for a cached row also starts reading it again (see cached()). */
const REFRESH_AHEAD_MS = 800;

/**
 * The answer of /api/trust and check_trust (COMPAT.md fields), shared between asks: read it,
 * never change it.
 */
export type TrustCheck = TrackedCheck | ReturnType<typeof notTracked>;
type TrackedCheck = ReturnType<typeof trustView>;

/** A trust answer with its JSON text, made once and sent as it is by every route that serves it. */
export interface TrustAnswer<Body extends TrustCheck = TrustCheck> {
  readonly body: Body;
  readonly json: string;
  /** Until when (ms since the epoch) it is the answer to give: 0 for one made for a single ask. */
  readonly reusableUntil: number;
}

interface CacheEntry {
  /** When the row was read (ms since the epoch). */
  at: number;
  row: AnalyzedServerRow;
  /** The answer made from the row, once asked for; `ready` once it is made. */
  answer?: Promise<TrustAnswer<TrackedCheck>>;
  ready?: TrustAnswer<TrackedCheck>;
  /** What /agent-query says from the row and its answer, once asked for (see queryParts). */
  query?: QueryParts;
}

const answerOf = <Body extends TrustCheck>(body: Body, reusableUntil = 0): TrustAnswer<Body> => ({
  body,
  json: JSON.stringify(body),
  reusableUntil,
});

/** How long an agent may reuse a verdict before asking again. */
export const VERDICT_TTL_SECONDS = 300;

const percent = (ratio: number | null | undefined) =>
  ratio === null || ratio === undefined ? null : Math.round(ratio * 10_000) / 100;

/** The COMPAT.md body of /api/trust and check_trust for a tracked server. */
function trustView(server: AnalyzedServerRow, trust: TrustAssessment, now: Date, base: string) {
  const s = server.stats;
  return {
    found: true as const,
    server_url: server.url,
    name: server.name,
    slug: server.slug,
    category: server.category,
    trust_score: trust.score,
    verdict: trust.verdict,
    reason_code: trust.reason_code,
    reason: trust.reason,
    evidence: trust.evidence,
    confidence: trust.confidence,
    metrics: {
      // agent-reported calls and their success over 30 days (what agents experienced)
      total_calls: s?.reports_30d.total ?? 0,
      success_rate: s?.reports_30d.success_rate ?? null,
      // our own probes: latency over the last 24 h, uptime over real windows (percent)
      avg_latency_ms: s?.latency_24h.mean_ms ?? null,
      p50_latency_ms: s?.latency_24h.p50_ms ?? null,
      p95_latency_ms: s?.latency_24h.p95_ms ?? null,
      p99_latency_ms: s?.latency_24h.p99_ms ?? null,
      uptime_24h: percent(s?.uptime.uptime_24h.ratio),
      uptime_7d: percent(s?.uptime.uptime_7d.ratio),
      uptime_30d: percent(s?.uptime.uptime_30d.ratio),
      probes_24h: s?.uptime.uptime_24h.probes ?? 0,
      agents_30d: s?.distinct_agents_30d ?? 0,
    },
    recent_7d: {
      interactions: s?.reports_7d.total ?? 0,
      success_rate: s?.reports_7d.success_rate ?? null,
      avg_latency_ms: s?.reports_7d.avg_latency_ms ?? null,
    },
    components: trust.components,
    first_seen: server.created_at.toISOString(),
    last_checked: server.last_probe_at?.toISOString() ?? null,
    last_outcome: server.last_outcome,
    last_up: server.last_up_at?.toISOString() ?? null,
    last_error: server.last_error,
    last_error_time: server.last_error_at?.toISOString() ?? null,
    tool_count: server.tools?.length ?? null,
    protocol_version: server.protocol_version,
    checked_at: now.toISOString(),
    status_url: `${base}/servers/${server.slug}`,
  };
}

/**
 * What /agent-query says about a server apart from the fields of each ask: for a tracked server
 * made once from a cached row and its answer, and shared by every ask within the row's second
 * (read it, never change it). Measured: assessing, and building these objects, on every query
 * cost ~14 µs/req of main-thread CPU on /agent-query, and serializing them ~3 µs/req.
 */
interface QueryParts {
  serverId: number | null;
  server: { url: string; name: string; slug: string; category: string } | null;
  verdict: TrustAssessment['verdict'];
  score: number | null;
  latency: { p50_ms: number | null; p95_ms: number | null };
  evidence: TrustAssessment['evidence'];
  reason_code: string;
  reason: string;
  confidence: number;
  /** The receipt's evidence; null when the row has no analysed window (made per ask then). */
  receiptEvidence: ReceiptEvidenceOf | null;
  /** The JSON text of the answer's fields so far (server … confidence), without its closing brace. */
  head: string;
}

/** The JSON text of the answer's first fields, server … confidence, in their order (see agentQuery). */
function withHead(parts: Omit<QueryParts, 'head'>): QueryParts {
  const { server, verdict, score, latency, evidence, reason_code, reason, confidence } = parts;
  const json = JSON.stringify({ server, verdict, score, latency, evidence, reason_code, reason, confidence });
  return { ...parts, head: json.slice(0, -1) };
}

type ReceiptEvidenceOf = ReturnType<typeof receiptEvidence>;

const DAY_MS = 24 * 3_600_000;
/** The latency of a server we do not track (shared: read it, never change it). */
const NO_LATENCY = Object.freeze({ p50_ms: null, p95_ms: null });

/** The receipt's evidence: the 24 hours up to the analysed window's end. */
const receiptEvidence = (kind: string, windowEnd: string, server: AnalyzedServerRow | undefined) => ({
  kind,
  window: { from: new Date(Date.parse(windowEnd) - DAY_MS).toISOString(), to: windowEnd },
  probes: server?.trust_inputs?.probes.total ?? 0,
  reports: server?.trust_inputs?.reports.total ?? 0,
});

function queryParts(server: AnalyzedServerRow, check: TrackedCheck): QueryParts {
  const windowEnd = server.trust_inputs?.window_end ?? null;
  return withHead({
    serverId: server.id,
    server: { url: server.url, name: server.name, slug: server.slug, category: server.category },
    verdict: check.verdict,
    score: check.trust_score,
    latency: {
      p50_ms: server.stats?.latency_24h.p50_ms ?? null,
      p95_ms: server.stats?.latency_24h.p95_ms ?? null,
    },
    evidence: check.evidence,
    reason_code: check.reason_code,
    reason: check.reason,
    confidence: check.confidence,
    receiptEvidence: windowEnd === null ? null : receiptEvidence(check.evidence, windowEnd, server),
  });
}

/** What /agent-query says about a server we do not track. */
const UNTRACKED = withHead({
  serverId: null,
  server: null,
  verdict: 'UNCERTAIN',
  score: null,
  latency: NO_LATENCY,
  evidence: 'none',
  reason_code: 'agent_not_found',
  reason: 'This server is not tracked: there is no runtime evidence about it.',
  confidence: 0,
  receiptEvidence: null,
});

/** The answer about a server we do not track: made per ask, so that registering shows at once. */
function notTracked(serverUrl: string, base: string) {
  return {
    found: false as const,
    server_url: serverUrl,
    trust_score: null,
    verdict: 'UNCERTAIN' as const,
    evidence: 'none' as const,
    reason_code: 'not_tracked',
    message: `This server is not tracked yet, so there is no runtime evidence about it. Register it (POST ${base}/api/register) to start probing.`,
  };
}

/**
 * The questions agents ask about one server — /api/trust, /agent-query and the check_trust
 * tool — answered from the same evaluation.
 */
export function trustService(deps: {
  runtime: Runtime;
  servers: ServerResolver;
  baselines: BaselinesCache;
  agentKeys: AgentKeysService;
  receipts: ReceiptsService;
}) {
  const { runtime } = deps;
  const base = runtime.config.publicBaseUrl;

  async function assess(server: AnalyzedServerRow, now = new Date()): Promise<TrustAssessment> {
    return evaluateTrust(server, await deps.baselines.get(), now);
  }

  /**
   * Found server rows are cached for FIND_CACHE_MS: agents ask about the same popular servers
   * over and over, and a row at most a second old still reflects every probe that finished
   * more than a second ago. Misses are not cached, so a server registered a moment ago is found
   * at once. The /api/trust and check_trust answer made from a cached row is kept beside it,
   * with its JSON text, for as long as the row: evaluating, shaping and serializing it again
   * for each of thousands of asks a second would only change checked_at.
   */
  const cache = new Map<string, CacheEntry>();
  /** Lookups under way, so that the asks arriving together when an entry expires share one query. */
  const lookups = new Map<string, Promise<AnalyzedServerRow | undefined>>();

  /**
   * The entry for this identifier if it is current. One asked for in the last fifth of its
   * second starts the next lookup already, so that the asks at its expiry find the new row
   * waiting instead of all waiting on one query (the p99 of /api/trust on a busy machine).
   */
  function cached(text: string) {
    const hit = cache.get(text);
    if (!hit) return undefined;
    const age = Date.now() - hit.at;
    if (age >= FIND_CACHE_MS) return undefined;
    if (age >= REFRESH_AHEAD_MS && !lookups.has(text)) {
      // a failure here is not this ask's: the first ask after expiry looks up again and sees it
      lookupOnce(text).catch(() => undefined);
    }
    return hit;
  }

  /** One lookup per identifier at a time: the asks arriving together share its query. */
  function lookupOnce(text: string): Promise<AnalyzedServerRow | undefined> {
    let lookup = lookups.get(text);
    if (!lookup) {
      lookup = lookUp(text).finally(() => lookups.delete(text));
      lookups.set(text, lookup);
    }
    return lookup;
  }

  async function lookUp(text: string): Promise<AnalyzedServerRow | undefined> {
    const at = Date.now();
    const isUrl = /^https?:\/\//i.test(text) && URL.canParse(text);
    const row = (
      isUrl
        ? await runtime.repos.servers.findByUrl(deps.servers.normalize(text))
        : await runtime.repos.servers.findByIdentifier(text)
    ) as AnalyzedServerRow | undefined;
    if (row) {
      cache.delete(text);
      if (cache.size >= FIND_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(text, { at, row });
    }
    return row;
  }

  /** A server by URL (normalized), slug or display name; undefined when we do not track it. */
  async function find(identifier: string): Promise<AnalyzedServerRow | undefined> {
    const text = identifier.trim();
    const hit = cached(text);
    if (hit) return hit.row;
    return lookupOnce(text);
  }

  /** The answer of a cache entry: made once (asks arriving meanwhile wait for the same one). */
  function entryAnswer(entry: CacheEntry): Promise<TrustAnswer<TrackedCheck>> {
    entry.answer ??= evaluated(entry.row, entry.at + FIND_CACHE_MS).then(
      (answer) => {
        entry.ready = answer;
        return answer;
      },
      (error: unknown) => {
        entry.answer = undefined;
        throw error;
      },
    );
    return entry.answer;
  }

  async function evaluated(server: AnalyzedServerRow, reusableUntil = 0): Promise<TrustAnswer<TrackedCheck>> {
    const now = new Date();
    return answerOf(trustView(server, await assess(server, now), now, base), reusableUntil);
  }

  /**
   * The /agent-query parts for a server by URL, slug or name (see QueryParts), from the cached
   * row and its answer like /api/trust; undefined when we do not track it.
   */
  async function queryPartsFor(identifier: string): Promise<QueryParts | undefined> {
    const text = identifier.trim();
    let entry = cached(text);
    if (!entry) {
      const server = await lookupOnce(text);
      if (!server) return undefined;
      entry = cached(text);
      // not the entry the lookup has just filled (replaced meanwhile): made for this ask alone
      if (entry?.row !== server) return queryParts(server, (await evaluated(server)).body);
    }
    if (entry.query) return entry.query;
    const answer = entry.ready ?? (await entryAnswer(entry));
    entry.query ??= queryParts(entry.row, answer.body);
    return entry.query;
  }

  /** /api/trust?url= and check_trust: the answer and its JSON text (see the cache above). */
  async function trustAnswer(serverUrl: string): Promise<TrustAnswer> {
    const text = serverUrl.trim();
    const hit = cached(text);
    if (hit) return hit.ready ?? entryAnswer(hit);
    const server = await lookupOnce(text);
    if (!server) return answerOf(notTracked(serverUrl, base));
    // the entry the lookup has just filled keeps the answer for the asks that follow
    const entry = cached(text);
    return entry?.row === server ? entryAnswer(entry) : evaluated(server);
  }

  return {
    find,
    assess,
    trustAnswer,

    /** The answer about this server if one was made within the cache's second; no waiting. */
    readyAnswer(serverUrl: string): TrustAnswer | undefined {
      return cached(serverUrl.trim())?.ready;
    },

    /** /api/trust?url= and check_trust: COMPAT.md fields, 200 with found:false when untracked. */
    async checkTrust(serverUrl: string): Promise<TrustCheck> {
      return (await trustAnswer(serverUrl)).body;
    },

    /**
     * GET /agent-query/<server>: one check of the key's allowance, the verdict, and a signed
     * receipt; the answer with its JSON text, to send as it is. An unknown server gets UNCERTAIN
     * with evidence "none" — and a receipt, so the agent can prove it was told "we don't know".
     */
    async agentQuery(identifier: string, authorization: string | undefined) {
      // the key's form first (401 at once); its check is used together with the receipt below
      const keyHash = deps.agentKeys.bearerKeyHash(authorization);
      const now = new Date();
      const parts = (await queryPartsFor(identifier)) ?? UNTRACKED;
      const checkedAt = now.toISOString();
      const { remaining, receipt } = await deps.agentKeys.chargeWithReceipt(keyHash, {
        server_url: parts.server?.url ?? identifier,
        server_id: parts.serverId,
        verdict: parts.verdict,
        score: parts.score,
        latency: parts.latency,
        evidence: parts.receiptEvidence ?? receiptEvidence(parts.evidence, checkedAt, undefined),
        query: identifier,
      });
      const verifyUrl = `${base}/v1/verify-receipt?id=${receipt.receipt_id}`;
      const body = {
        server: parts.server,
        verdict: parts.verdict,
        score: parts.score,
        latency: parts.latency,
        evidence: parts.evidence,
        reason_code: parts.reason_code,
        reason: parts.reason,
        confidence: parts.confidence,
        checked_at: checkedAt,
        ttl_seconds: VERDICT_TTL_SECONDS,
        receipt_id: receipt.receipt_id,
        receipt: receipt.jws,
        log_index: receipt.log_index,
        verify_url: verifyUrl,
        checks_remaining: remaining,
      };
      // = JSON.stringify(body): the fields up to confidence are serialized once per cached row
      const json =
        `${parts.head},"checked_at":"${checkedAt}","ttl_seconds":${VERDICT_TTL_SECONDS}` +
        `,"receipt_id":${JSON.stringify(receipt.receipt_id)},"receipt":${JSON.stringify(receipt.jws)}` +
        `,"log_index":${JSON.stringify(receipt.log_index)},"verify_url":${JSON.stringify(verifyUrl)}` +
        `,"checks_remaining":${JSON.stringify(remaining)}}`;
      return { body, json };
    },
  };
}

export type TrustService = ReturnType<typeof trustService>;
