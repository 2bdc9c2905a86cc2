import { makeBadge } from 'badge-maker';

export const BADGE_METRICS = ['score', 'uptime', 'verdict'] as const;
export type BadgeMetric = (typeof BADGE_METRICS)[number];

/** What a badge needs to know about a server; null when the server is not tracked. */
export interface BadgeFacts {
  score: number | null;
  verdict: 'PASS' | 'UNCERTAIN' | 'FAIL';
  /** 30-day uptime ratio (0..1) or null without conclusive probes. */
  uptime30d: number | null;
}

const LABELS: Record<BadgeMetric, string> = {
  score: 'MCP trust',
  uptime: 'uptime 30d',
  verdict: 'MCP verdict',
};

// shields.io's named colours, so badges look like every other badge in a README
const GREY = 'lightgrey';

function scoreMessage(score: number | null): { message: string; color: string } {
  if (score === null) return { message: 'no data', color: GREY };
  const color = score >= 70 ? 'brightgreen' : score >= 50 ? 'yellowgreen' : score >= 30 ? 'yellow' : 'red';
  return { message: `${Math.round(score)}/100`, color };
}

function uptimeMessage(ratio: number | null): { message: string; color: string } {
  if (ratio === null) return { message: 'no data', color: GREY };
  const pct = ratio * 100;
  // never round a day with failures up to 100 %
  const text = pct === 100 ? '100' : Math.min(pct, 99.99).toFixed(pct >= 99 ? 2 : 1);
  const color =
    pct >= 99.5 ? 'brightgreen' : pct >= 99 ? 'green' : pct >= 95 ? 'yellow' : pct >= 90 ? 'orange' : 'red';
  return { message: `${text}%`, color };
}

function verdictMessage(verdict: BadgeFacts['verdict']): { message: string; color: string } {
  const color = verdict === 'PASS' ? 'brightgreen' : verdict === 'FAIL' ? 'red' : 'yellow';
  return { message: verdict.toLowerCase(), color };
}

/** A flat shields-style SVG; an untracked server gets a grey "unknown" badge, not an error. */
export function renderBadge(metric: BadgeMetric, facts: BadgeFacts | null): string {
  const { message, color } = !facts
    ? { message: 'unknown', color: GREY }
    : metric === 'score'
      ? scoreMessage(facts.score)
      : metric === 'uptime'
        ? uptimeMessage(facts.uptime30d)
        : verdictMessage(facts.verdict);
  return makeBadge({ label: LABELS[metric], message, color, style: 'flat' });
}
