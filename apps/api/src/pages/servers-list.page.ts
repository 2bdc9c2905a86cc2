import { CATEGORIES } from '@observatory/core';
import type { AnalyzedServerRow } from '@observatory/service';
import { type Html, html, raw } from './html.ts';
import { serverTable } from './server-table.ts';

export interface ServersListView {
  query: string;
  category: string | null;
  rows: AnalyzedServerRow[];
  /** Link to the next page of the plain listing (search results are one page). */
  nextHref: string | null;
  now: Date;
}

export function renderServersListBody(view: ServersListView): Html {
  const heading = view.query
    ? html`Results for “${view.query}”`
    : view.category
      ? html`Servers in ${view.category}`
      : html`All servers`;
  const options = CATEGORIES.map(
    (c) => html`<option value="${c}"${c === view.category ? raw(' selected') : ''}>${c}</option>`,
  );
  const empty = view.query
    ? html`<p class="card empty">No tracked server has “${view.query}” in its name, slug or URL. Servers join by registration (<code>POST /api/register</code>), agent reports or an import.</p>`
    : html`<p class="card empty">No servers here yet.</p>`;
  return html`<h1>${heading}</h1>
<form class="card search-form section" role="search" action="/servers" method="get">
  <label for="servers-q">Name, slug or URL contains</label>
  <input id="servers-q" type="search" name="q" value="${view.query}" maxlength="200">
  <label class="visually-hidden" for="servers-category">Category</label>
  <select id="servers-category" name="category"><option value="">All categories</option>${options}</select>
  <button type="submit">Search</button>
</form>
<section class="section card" aria-label="Servers">
${view.rows.length ? serverTable(view.rows, 'Tracked servers', view.now) : empty}
${view.nextHref ? html`<div class="pager"><a class="button" href="${view.nextHref}">Next page</a></div>` : ''}
</section>`;
}

export function renderNotFoundBody(identifier: string): Html {
  return html`<section class="card not-found" aria-labelledby="nf-heading">
<h1 id="nf-heading">Server not found</h1>
<p>No tracked server has the slug <code>${identifier}</code>.</p>
<p><a href="/servers?q=${encodeURIComponent(identifier)}">Search for it</a> or go back to the <a href="/">dashboard</a>.</p>
</section>`;
}
