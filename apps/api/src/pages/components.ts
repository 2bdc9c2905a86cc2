import { formatAgo, formatTime } from './format.ts';
import { type Html, html } from './html.ts';

/** A verdict as a coloured pill; the word itself carries the meaning, colour only repeats it. */
export function verdictPill(verdict: string | null | undefined): Html {
  if (!verdict) return html`<span class="pill pill-none">NO DATA</span>`;
  const cls = verdict === 'PASS' ? 'pass' : verdict === 'FAIL' ? 'fail' : 'uncertain';
  return html`<span class="pill pill-${cls}">${verdict}</span>`;
}

export function verdictClass(verdict: string | null | undefined): string {
  return verdict === 'PASS' ? 'pass' : verdict === 'FAIL' ? 'fail' : verdict ? 'uncertain' : 'none';
}

/** "3 min ago" with the exact UTC time for machines and on hover. */
export function timeAgo(at: Date | null | undefined, now: Date): Html {
  if (!at) return html`never`;
  return html`<time datetime="${at.toISOString()}" title="${formatTime(at)}">${formatAgo(at, now)}</time>`;
}

export function statusHref(slug: string): string {
  return `/servers/${encodeURIComponent(slug)}`;
}
