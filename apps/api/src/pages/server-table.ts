import type { AnalyzedServerRow } from '@observatory/service';
import { statusHref, timeAgo, verdictPill } from './components.ts';
import { formatMs, formatPercent, formatScore } from './format.ts';
import { type Html, html } from './html.ts';

/** The server listing table of the search and directory pages. */
export function serverTable(rows: readonly AnalyzedServerRow[], caption: string, now: Date): Html {
  const body = rows.map(
    (s) => html`<tr>
<th scope="row"><a href="${statusHref(s.slug)}">${s.name}</a><div class="url">${s.url}</div></th>
<td>${s.category}</td>
<td>${verdictPill(s.trust_verdict)}</td>
<td class="num">${formatScore(s.trust_score)}</td>
<td class="num">${formatPercent(s.stats?.uptime.uptime_24h.ratio ?? null)}</td>
<td class="num">${formatMs(s.stats?.latency_24h.p95_ms ?? null)}</td>
<td>${timeAgo(s.last_probe_at, now)}</td>
</tr>`,
  );
  return html`<div class="table-wrap"><table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Server</th><th scope="col">Category</th><th scope="col">Verdict</th><th scope="col" class="num">Score</th><th scope="col" class="num">Uptime 24 h</th><th scope="col" class="num">p95 24 h</th><th scope="col">Last checked</th></tr></thead>
<tbody>${body}</tbody></table></div>`;
}
