import type { Services } from '@observatory/service';
import { statusHref, timeAgo, verdictPill } from './components.ts';
import { formatCount, formatPercent, formatScore, NO_DATA } from './format.ts';
import { type Html, html } from './html.ts';

export async function loadHome(services: Services) {
  const [stats, atlas] = await Promise.all([services.directory.stats(), services.directory.atlas()]);
  const populated = atlas.categories.filter((c) => c.indexed > 0);
  const boards = await Promise.all(
    populated.map((c) => services.directory.leaderboard({ category: c.category, limit: 5 })),
  );
  return { stats, atlas, boards: boards.filter((b) => b.servers.length > 0), now: new Date() };
}

type HomeData = Awaited<ReturnType<typeof loadHome>>;

function statCard(label: string, value: string, sub?: Html | string): Html {
  return html`<div class="card stat"><dt>${label}</dt><dd>${value}${sub ? html`<span class="sub">${sub}</span>` : ''}</dd></div>`;
}

function topServers(data: HomeData): Html {
  if (data.boards.length === 0) {
    return html`<p class="card empty">No server has a trust score yet. Register one with <code>POST /api/register</code>
(or <code>npm run demo</code> for a local fleet); its first probe runs at once and a score forms as evidence arrives.</p>`;
  }
  const card = (board: HomeData['boards'][number]) => {
    const total = data.atlas.categories.find((c) => c.category === board.category)?.indexed ?? 0;
    return html`<section class="card" aria-labelledby="top-${board.category}">
<div class="section-head"><h3 class="cap" id="top-${board.category}">${board.category}</h3><a class="small" href="/servers?category=${encodeURIComponent(board.category)}">All ${total}<span class="visually-hidden"> ${board.category} servers</span></a></div>
<ol class="top-list">${board.servers.map(
      (s) =>
        html`<li><a class="name" href="${statusHref(s.slug)}">${s.name}</a><span class="figure" title="trust score">${formatScore(s.trust_score)}</span>${verdictPill(s.verdict)}</li>`,
    )}</ol>
</section>`;
  };
  return html`<div class="grid grid-3">${data.boards.map(card)}</div>`;
}

function coverageTable(data: HomeData): Html {
  const populated = data.atlas.categories.filter((c) => c.indexed > 0);
  const empty = data.atlas.categories.filter((c) => c.indexed === 0).map((c) => c.category);
  if (populated.length === 0) return html`<p class="card empty">No servers indexed yet.</p>`;
  const rows = populated.map(
    (c) =>
      html`<tr><th scope="row"><a href="/servers?category=${encodeURIComponent(c.category)}">${c.category}</a></th><td class="num">${formatCount(c.indexed)}</td><td class="num">${formatCount(c.with_behavioural_record)}</td><td class="num">${formatCount(c.verifiable_at_runtime)}${c.indexed ? html` <span class="muted">(${c.verifiable_at_runtime_pct}%)</span>` : ''}</td><td class="num">${formatScore(c.average_trust_score)}</td></tr>`,
  );
  return html`<div class="card table-wrap"><table>
<caption class="visually-hidden">Coverage per category</caption>
<thead><tr><th scope="col">Category</th><th scope="col" class="num">Indexed</th><th scope="col" class="num">With a record</th><th scope="col" class="num">Answering (24 h)</th><th scope="col" class="num">Avg score</th></tr></thead>
<tbody>${rows}</tbody></table>
${empty.length ? html`<p class="muted small">No servers yet in ${empty.join(', ')}.</p>` : ''}</div>`;
}

export function renderHomeBody(data: HomeData): Html {
  const { stats, atlas, now } = data;
  const t = atlas.totals;
  const lastProbe = stats.data_freshness.last_probe_at ? new Date(stats.data_freshness.last_probe_at) : null;
  return html`<section class="hero" aria-labelledby="hero-heading">
<h1 id="hero-heading">Runtime trust for MCP servers</h1>
<p class="lead">We probe registered MCP servers with a real MCP handshake, keep their uptime and latency,
and give agents a PASS / UNCERTAIN / FAIL verdict with a signed receipt before they call a server.
Where we have no evidence, the verdict says so.</p>
<form class="search-form" role="search" action="/servers" method="get">
  <label for="q">Find a server by name, slug or URL</label>
  <input id="q" type="search" name="q" placeholder="e.g. weather or https://example.com/mcp" maxlength="200" required>
  <button type="submit">Search</button>
</form>
</section>

<section class="section" aria-labelledby="stats-heading">
<div class="section-head"><h2 id="stats-heading">Live figures</h2><span class="muted small">Last probe ${timeAgo(lastProbe, now)} · data since ${stats.data_collection_started}</span></div>
<dl class="grid grid-stats">
${statCard('Servers tracked', formatCount(stats.total_servers_tracked))}
${statCard('Answering MCP', formatCount(t.verifiable_at_runtime), `${t.verifiable_at_runtime_pct}% of indexed, last 24 h`)}
${statCard('With a record', formatCount(t.with_behavioural_record), `${t.with_behavioural_record_pct}% have probes or reports`)}
${statCard('Probes', formatCount(stats.probes_last_24h), 'last 24 h')}
${statCard('Agent reports', formatCount(stats.interactions_last_24h), `last 24 h · ${formatCount(stats.total_interactions_recorded)} in all`)}
${statCard('Average score', stats.average_trust_score === null ? NO_DATA : formatScore(stats.average_trust_score), 'of scored servers')}
</dl>
</section>

<section class="section" aria-labelledby="top-heading">
<div class="section-head"><h2 id="top-heading">Top servers by category</h2><a class="small" href="/servers">All servers</a></div>
${topServers(data)}
</section>

<section class="section" aria-labelledby="coverage-heading">
<div class="section-head"><h2 id="coverage-heading">Coverage</h2><a class="small" href="/atlas/report">Coverage report</a></div>
<p class="muted small">Indexed: known to us. With a record: at least one probe or agent report. Answering: completed an MCP handshake in the last 24 hours (${formatPercent(t.indexed ? t.verifiable_at_runtime / t.indexed : null, 1)} of indexed).</p>
${coverageTable(data)}
</section>

<section class="section grid grid-2" aria-label="How to use it">
<div class="card"><h2>For agents</h2><p>Ask before you call: <code>GET /api/trust?url=…</code>, or the <code>check_trust</code> tool at <code>/mcp</code>.
Get a key with one call to <code>POST /agent/auth</code> for verdicts with signed receipts. <a href="/agent-onboarding/SKILL.md">Onboarding skill</a></p></div>
<div class="card"><h2>For server owners</h2><p>Register with <code>POST /api/register</code>: your server gets probed at once, a public status page with uptime, latency and incidents, and a badge for your README.</p></div>
</section>`;
}
