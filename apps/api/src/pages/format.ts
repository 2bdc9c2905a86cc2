/** Display formatting shared by the pages; every function accepts "no data" and says so. */

export const NO_DATA = '—';

export function formatPercent(ratio: number | null | undefined, digits = 2): string {
  if (ratio === null || ratio === undefined) return NO_DATA;
  const pct = ratio * 100;
  // 100 % only when nothing failed: 99.996 % must not round up to a perfect record
  if (pct < 100 && pct > 100 - 10 ** -digits) return `${(100 - 10 ** -digits).toFixed(digits)}%`;
  return `${pct.toFixed(pct === 100 ? 0 : digits)}%`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return NO_DATA;
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined ? NO_DATA : score.toFixed(score % 1 === 0 ? 0 : 1);
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** "3 min ago", "2 h ago", "5 days ago"; the exact time goes in a <time> attribute beside it. */
export function formatAgo(at: Date | null | undefined, now: Date): string {
  if (!at) return 'never';
  const s = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  const days = Math.floor(s / 86_400);
  return `${days} day${days === 1 ? '' : 's'} ago`;
}

/** "2026-05-04 13:07 UTC". */
export function formatTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} days`;
}

export const OUTCOME_LABELS: Record<string, string> = {
  up: 'Up',
  degraded: 'Degraded',
  auth_required: 'Needs auth',
  not_mcp: 'Not MCP',
  down: 'Down',
};
