import type { TrustAssessment } from '@observatory/core';
import { histogramQuantile } from '@observatory/core';
import type { AnomaliesRepository, DailyRollup, HourlyRollup, StoredProbeResult } from '@observatory/db';
import type { AnalyzedServerRow, Services } from '@observatory/service';
import {
  type LatencyLegend,
  type LatencyPoint,
  latencyChart,
  overallUptime,
  UPTIME_CLASSES,
  type UptimeDay,
  uptimeBars,
} from './charts.ts';
import { statusHref, timeAgo, verdictClass } from './components.ts';
import {
  formatCount,
  formatDuration,
  formatMs,
  formatPercent,
  formatScore,
  formatTime,
  NO_DATA,
  OUTCOME_LABELS,
} from './format.ts';
import { type Html, html } from './html.ts';
import type { DriftEventRow, Incident, PagesRepository } from './pages.repository.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Latest probes read for the latency chart of a server too new for percentiles. */
const RECENT_PROBE_POINTS = 60;

export interface StatusPageData {
  server: AnalyzedServerRow;
  trust: TrustAssessment;
  days: UptimeDay[];
  daily: DailyRollup[];
  hourly: HourlyRollup[];
  anomalies: Awaited<ReturnType<AnomaliesRepository['openFor']>>;
  incidents: Incident[];
  /** The latest probes, newest first. */
  probes: StoredProbeResult[];
  drift: DriftEventRow[];
  baseUrl: string;
  now: Date;
}

/** Everything the status page shows, read in parallel. */
export async function loadStatusPage(
  services: Services,
  pages: PagesRepository,
  server: AnalyzedServerRow,
  now = new Date(),
): Promise<StatusPageData> {
  const { repos } = services.runtime;
  const today = now.toISOString().slice(0, 10);
  const firstDay = new Date(now.getTime() - 89 * DAY_MS).toISOString().slice(0, 10);
  const nextHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  const [trust, daily, hourly, anomalies, probes, incidents, drift] = await Promise.all([
    services.trust.assess(server, now),
    repos.rollups.daily([server.id], firstDay, today),
    repos.rollups.hourly([server.id], new Date(nextHour - 48 * HOUR_MS), new Date(nextHour)),
    repos.anomalies.openFor([server.id]),
    repos.probeResults.latestForServer(server.id, RECENT_PROBE_POINTS),
    pages.incidents(server.id, new Date(now.getTime() - 90 * DAY_MS), 10),
    pages.driftEvents(server.id, 20),
  ]);
  const byDay = new Map(daily.map((d) => [d.day, d]));
  const days: UptimeDay[] = [];
  for (let i = 89; i >= 0; i--) {
    const day = new Date(now.getTime() - i * DAY_MS).toISOString().slice(0, 10);
    const row = byDay.get(day);
    days.push({ day, probes: row?.probes ?? 0, ups: row?.ups ?? 0 });
  }
  return {
    server,
    trust,
    days,
    daily,
    hourly,
    anomalies,
    incidents,
    probes,
    drift,
    baseUrl: services.runtime.config.publicBaseUrl,
    now,
  };
}

/**
 * Daily p50/p95 when there are three days of latency, else hourly over 48 h, else each of the
 * latest answering probes (a new server shows its latency from its second probe on).
 */
function latencySeries(
  data: StatusPageData,
): { points: LatencyPoint[]; caption: string; legend?: LatencyLegend } | null {
  const quantiles = (hist: number[]) => ({
    p50: histogramQuantile(hist, 0.5),
    p95: histogramQuantile(hist, 0.95),
  });
  const dailyWithData = data.daily.filter((d) => d.latency_hist.length > 0);
  if (dailyWithData.length >= 3) {
    const byDay = new Map(data.daily.map((d) => [d.day, d]));
    return {
      caption: 'Latency of answering probes, daily p50 and p95, last 30 days',
      points: data.days.slice(-30).map((d) => {
        const row = byDay.get(d.day);
        return { label: d.day.slice(5), ...(row ? quantiles(row.latency_hist) : { p50: null, p95: null }) };
      }),
    };
  }
  const hoursWithData = data.hourly.filter((h) => h.latency_hist.length > 0);
  if (hoursWithData.length >= 2) {
    const byHour = new Map(data.hourly.map((h) => [h.hour.getTime(), h]));
    const first = hoursWithData[0]!.hour.getTime();
    const last = Math.floor(data.now.getTime() / HOUR_MS) * HOUR_MS;
    const points: LatencyPoint[] = [];
    for (let t = first; t <= last; t += HOUR_MS) {
      const row = byHour.get(t);
      points.push({
        label: `${new Date(t).toISOString().slice(11, 13)}:00`,
        ...(row && row.latency_hist.length > 0 ? quantiles(row.latency_hist) : { p50: null, p95: null }),
      });
    }
    return { caption: 'Latency of answering probes, hourly p50 and p95 (UTC), last 48 hours', points };
  }
  const answering = data.probes
    .filter((p) => p.outcome === 'up' || p.outcome === 'degraded')
    .slice(0, RECENT_PROBE_POINTS)
    .reverse();
  if (answering.length >= 2) {
    return {
      caption: `Latency of the latest ${answering.length} answering probes (UTC); percentiles follow after two hours`,
      legend: { p50: 'each probe', p95: null },
      points: answering.map((p) => ({
        label: p.started_at.toISOString().slice(11, 19),
        p50: p.total_ms,
        p95: null,
      })),
    };
  }
  return null;
}

function uptimeSection(data: StatusPageData): Html {
  const row = (days: UptimeDay[], id: string, caption: string, heading: string) => {
    const overall = overallUptime(days);
    return html`<div class="uptime-row">
  <div class="section-head"><h3 id="${id}-h">${heading}</h3><span class="muted small">${overall === null ? 'no data yet' : `${formatPercent(overall)} up`}</span></div>
  ${uptimeBars(days, id, caption)}
  <div class="uptime-axis" aria-hidden="true"><span>${days.length} days ago</span><span>Today</span></div>
</div>`;
  };
  const last30 = data.days.slice(-30);
  const byDay = new Map(data.daily.map((d) => [d.day, d]));
  const tableRows = [...last30].reverse().map((d) => {
    const r = byDay.get(d.day);
    return html`<tr><th scope="row">${d.day}</th><td class="num">${d.probes}</td><td class="num">${d.ups}</td><td class="num">${d.probes ? formatPercent(d.ups / d.probes) : NO_DATA}</td><td class="num">${formatMs(r ? histogramQuantile(r.latency_hist, 0.5) : null)}</td><td class="num">${formatMs(r ? histogramQuantile(r.latency_hist, 0.95) : null)}</td></tr>`;
  });
  return html`<section class="section card" aria-labelledby="uptime-heading">
<h2 id="uptime-heading">Uptime</h2>
<p class="muted small">Share of conclusive probes that completed an MCP handshake, per UTC day. Probes answered with “needs auth” are left out: they say nothing about availability.</p>
${row(last30, 'uptime-30', 'Daily uptime, last 30 days', 'Last 30 days')}
${row(data.days, 'uptime-90', 'Daily uptime, last 90 days', 'Last 90 days')}
<ul class="legend">${UPTIME_CLASSES.map((c) => html`<li><span class="swatch swatch-${c.key}"></span>${c.label}</li>`)}<li><span class="swatch swatch-none"></span>no data</li></ul>
<details><summary>Daily figures, last 30 days</summary>
<div class="table-wrap"><table><caption class="visually-hidden">Daily probes, uptime and latency, newest first</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Probes</th><th scope="col" class="num">Up</th><th scope="col" class="num">Uptime</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th></tr></thead>
<tbody>${tableRows}</tbody></table></div>
</details>
</section>`;
}

function latencySection(data: StatusPageData): Html {
  const series = latencySeries(data);
  const body = series
    ? html`${latencyChart(series.points, 'latency-chart', series.caption, series.legend)}
<details><summary>Latency figures</summary>
<div class="table-wrap"><table><caption class="visually-hidden">${series.caption}</caption>
<thead><tr><th scope="col">When</th><th scope="col" class="num">${series.legend?.p50 ?? 'p50'}</th>${series.legend?.p95 === null ? '' : html`<th scope="col" class="num">p95</th>`}</tr></thead>
<tbody>${series.points.map((p) => html`<tr><th scope="row">${p.label}</th><td class="num">${formatMs(p.p50)}</td>${series.legend?.p95 === null ? '' : html`<td class="num">${formatMs(p.p95)}</td>`}</tr>`)}</tbody></table></div>
</details>`
    : html`<p class="empty">No chart yet: it needs two probes that completed the handshake.</p>`;
  return html`<section class="section card" aria-labelledby="latency-heading">
<div class="section-head"><h2 id="latency-heading">Latency</h2><span class="muted small">Full MCP handshake: initialize, ping, tools/list</span></div>
${body}
</section>`;
}

function anomaliesCard(data: StatusPageData): Html {
  const rows = data.anomalies.map(
    (a) =>
      html`<tr><td><span class="sev-${a.severity}">${a.severity}</span></td><td>${a.detail || `${a.metric} (${a.scope})`}</td><td>${timeAgo(a.detected_at, data.now)}</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="anomalies-heading">
<h2 id="anomalies-heading">Open anomalies</h2>
${
  rows.length
    ? html`<div class="table-wrap"><table><caption class="visually-hidden">Open anomalies against the server's own and its category's baselines</caption>
<thead><tr><th scope="col">Severity</th><th scope="col">What deviates</th><th scope="col">Since</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="empty">None: recent behaviour is within this server's own baseline and its category's.</p>`
}
</section>`;
}

function incidentsCard(data: StatusPageData): Html {
  const rows = data.incidents.map((i) => {
    const end = i.ended_at ?? data.now;
    return html`<tr>
<td><strong>${OUTCOME_LABELS[i.outcome] ?? i.outcome}</strong>${i.ended_at ? '' : html` <span class="pill pill-fail">ONGOING</span>`}</td>
<td>${timeAgo(i.started_at, data.now)}<br><span class="muted small">for ${formatDuration(end.getTime() - i.started_at.getTime())}, ${i.probes} probe${i.probes === 1 ? '' : 's'}</span></td>
<td class="small">${i.error_message ?? i.error_type ?? NO_DATA}${i.http_status ? html` <span class="muted">(HTTP ${i.http_status})</span>` : ''}</td>
</tr>`;
  });
  return html`<section class="card" aria-labelledby="incidents-heading">
<h2 id="incidents-heading">Recent incidents</h2>
${
  rows.length
    ? html`<div class="table-wrap"><table><caption class="visually-hidden">Runs of probes that did not come back up, newest first</caption>
<thead><tr><th scope="col">Outcome</th><th scope="col">Started</th><th scope="col">Last error</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="empty">${data.probes.length ? 'None among the recent probes: every one came back up.' : 'No probes yet.'}</p>`
}
</section>`;
}

function toolsCard(data: StatusPageData): Html {
  const tools = data.server.tools ?? [];
  return html`<section class="card" aria-labelledby="tools-heading">
<div class="section-head"><h2 id="tools-heading">Tools</h2><span class="muted small">${data.server.tools ? `${tools.length} listed by the latest answering probe` : ''}</span></div>
${
  data.server.tools === null
    ? html`<p class="empty">No tool list yet: the server has not completed a handshake.</p>`
    : tools.length
      ? html`<ul class="tools">${tools.map((t) => html`<li>${t.name}</li>`)}</ul>`
      : html`<p class="empty">The server lists no tools.</p>`
}
</section>`;
}

function driftCard(data: StatusPageData): Html {
  const names = (list: string[], cls: string, sign: string) =>
    list.length ? html`<span class="${cls}">${sign} ${list.join(', ')}</span><br>` : '';
  const rows = data.drift.map(
    (d) =>
      html`<tr><td>${timeAgo(d.detected_at, data.now)}</td><td class="small">${names(d.added, 'change-add', 'added')}${names(d.removed, 'change-remove', 'removed')}${names(d.altered, 'change-alter', 'changed')}</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="drift-heading">
<h2 id="drift-heading">Tool drift</h2>
${
  rows.length
    ? html`<div class="table-wrap"><table><caption class="visually-hidden">Changes of the tool list, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">What changed</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="empty">No change of the tool list since it was first seen.</p>`
}
</section>`;
}

function badgeSection(data: StatusPageData): Html {
  const slug = encodeURIComponent(data.server.slug);
  const page = `${data.baseUrl}/servers/${slug}`;
  const badge = (metric: string) =>
    `${data.baseUrl}/badge/${slug}.svg${metric === 'score' ? '' : `?metric=${metric}`}`;
  const markdown = `[![MCP trust score](${badge('score')})](${page})`;
  const htmlSnippet = `<a href="${page}"><img src="${badge('score')}" alt="MCP trust score"></a>`;
  return html`<section class="section card" aria-labelledby="badge-heading">
<h2 id="badge-heading">Badge for your README</h2>
<div class="badges">
<img src="/badge/${slug}.svg" alt="Trust score badge" height="20">
<img src="/badge/${slug}.svg?metric=uptime" alt="30-day uptime badge" height="20">
<img src="/badge/${slug}.svg?metric=verdict" alt="Verdict badge" height="20">
</div>
<h3 id="badge-md">Markdown</h3>
<pre class="snippet" aria-labelledby="badge-md"><code>${markdown}</code></pre>
<h3 id="badge-html">HTML</h3>
<pre class="snippet" aria-labelledby="badge-html"><code>${htmlSnippet}</code></pre>
<p class="muted small">Add <code>?metric=uptime</code> or <code>?metric=verdict</code> for the other badges. Badges are cached for five minutes.</p>
</section>`;
}

/** Only http(s) links are rendered: a javascript: URL must never become a link. */
function isWebUrl(url: string | null): url is string {
  return url !== null && /^https?:\/\//i.test(url) && URL.canParse(url);
}

export function renderStatusBody(data: StatusPageData): Html {
  const { server, trust, now } = data;
  const s = server.stats;
  const vclass = verdictClass(trust.verdict);
  const stat = (label: string, value: string, sub?: string) =>
    html`<div class="card stat"><dt>${label}</dt><dd>${value}${sub ? html`<span class="sub">${sub}</span>` : ''}</dd></div>`;
  return html`<nav aria-label="Breadcrumb" class="small muted"><a href="/servers">Servers</a> / <span aria-current="page">${server.name}</span></nav>
<section class="card section" aria-labelledby="server-name">
<div class="status-head">
  <div>
    <h1 id="server-name">${server.name}</h1>
    <p class="server-url"><code>${server.url}</code></p>
    <ul class="meta">
      <li>Category: <a href="/servers?category=${encodeURIComponent(server.category)}">${server.category}</a></li>
      <li>Tracked since ${formatTime(server.created_at).slice(0, 10)}</li>
      <li>Last checked ${timeAgo(server.last_probe_at, now)}${server.last_outcome ? ` (${OUTCOME_LABELS[server.last_outcome] ?? server.last_outcome})` : ''}</li>
      ${server.protocol_version ? html`<li>MCP ${server.protocol_version}</li>` : ''}
      ${isWebUrl(server.github_url) ? html`<li><a href="${server.github_url}" rel="nofollow noopener">Source code</a></li>` : ''}
    </ul>
    ${server.description ? html`<p class="description">${server.description}</p>` : ''}
  </div>
  <div class="verdict-box verdict-${vclass}">
    <div class="label">Verdict</div>
    <div class="verdict">${trust.verdict}</div>
    <div class="score">Score <strong>${formatScore(trust.score)}</strong>${trust.score === null ? '' : ' / 100'}</div>
    <div class="small muted">Confidence ${Math.round(trust.confidence * 100)}%</div>
  </div>
</div>
<p class="reason"><strong>Why:</strong> ${trust.reason}</p>
</section>
<section class="section" aria-labelledby="figures-heading">
<h2 id="figures-heading" class="visually-hidden">Key figures</h2>
<dl class="grid grid-stats">
${stat('Uptime 24 h', formatPercent(s?.uptime.uptime_24h.ratio), `${formatCount(s?.uptime.uptime_24h.probes ?? 0)} probes`)}
${stat('Uptime 7 days', formatPercent(s?.uptime.uptime_7d.ratio))}
${stat('Uptime 30 days', formatPercent(s?.uptime.uptime_30d.ratio))}
${stat('Latency p50', formatMs(s?.latency_24h.p50_ms), 'last 24 h')}
${stat('Latency p95', formatMs(s?.latency_24h.p95_ms), 'last 24 h')}
${stat('Agent reports', formatCount(s?.reports_30d.total ?? 0), s?.reports_30d.success_rate != null ? `${formatPercent(s.reports_30d.success_rate, 1)} succeeded, 30 days` : 'last 30 days')}
</dl>
</section>
${uptimeSection(data)}
${latencySection(data)}
<div class="grid grid-2 section">${anomaliesCard(data)}${incidentsCard(data)}</div>
<div class="grid grid-2 section">${toolsCard(data)}${driftCard(data)}</div>
${badgeSection(data)}
<p class="muted small section">Machine-readable: <a href="/api/trust?url=${encodeURIComponent(server.url)}">/api/trust</a> · <a href="/api/history?url=${encodeURIComponent(server.url)}">/api/history</a> · <a href="/api/anomaly?url=${encodeURIComponent(server.url)}">/api/anomaly</a> · permalink <a href="${statusHref(server.slug)}">${statusHref(server.slug)}</a></p>`;
}
