import { formatMs, formatPercent } from './format.ts';
import { type Html, html, raw } from './html.ts';

/**
 * Server-rendered SVG charts. Each is an image to assistive technology (role="img" with a
 * title and a description that says what the chart shows in words); the numbers behind it are
 * also given as a table by the page.
 */

export interface UptimeDay {
  day: string; // YYYY-MM-DD
  /** Conclusive probes that day (auth_required excluded), and how many answered MCP. */
  probes: number;
  ups: number;
}

/** Uptime classes with colours of at least 3:1 against white (WCAG non-text contrast). */
export const UPTIME_CLASSES = [
  { key: 'full', label: '≥ 99.5% up', min: 0.995, color: '#2da44e' },
  { key: 'minor', label: '97 – 99.5%', min: 0.97, color: '#bf8700' },
  { key: 'major', label: '90 – 97%', min: 0.9, color: '#e16f24' },
  { key: 'outage', label: '< 90%', min: 0, color: '#cf222e' },
] as const;
export const NO_DATA_COLOR = '#afb8c1';

function uptimeClass(day: UptimeDay) {
  if (day.probes === 0) return null;
  const ratio = day.ups / day.probes;
  return UPTIME_CLASSES.find((c) => ratio >= c.min)!;
}

/** Ratio over the days that had probes; null when none had. */
export function overallUptime(days: readonly UptimeDay[]): number | null {
  const probes = days.reduce((s, d) => s + d.probes, 0);
  return probes > 0 ? days.reduce((s, d) => s + d.ups, 0) / probes : null;
}

/** One bar per day, oldest on the left; hovering a bar shows its day and figure. */
export function uptimeBars(days: readonly UptimeDay[], id: string, caption: string): Html {
  const step = 900 / days.length;
  const gap = days.length > 60 ? 2 : 3;
  const overall = overallUptime(days);
  const withData = days.filter((d) => d.probes > 0).length;
  const imperfect = days.filter((d) => d.probes > 0 && d.ups < d.probes).length;
  const summary =
    overall === null
      ? `${caption}: no conclusive probes yet.`
      : `${caption}: ${formatPercent(overall)} up over ${withData} day${withData === 1 ? '' : 's'} with probes; ${imperfect === 0 ? 'no day with failed probes' : `${imperfect} day${imperfect === 1 ? '' : 's'} with failed probes`}.`;
  const bars = days.map((d, i) => {
    const cls = uptimeClass(d);
    const tip =
      d.probes === 0
        ? `${d.day}: no data`
        : `${d.day}: ${formatPercent(d.ups / d.probes)} up (${d.ups} of ${d.probes} probes)`;
    return html`<rect x="${(i * step).toFixed(2)}" y="0" width="${(step - gap).toFixed(2)}" height="34" rx="2" fill="${cls?.color ?? NO_DATA_COLOR}"><title>${tip}</title></rect>`;
  });
  return html`<svg class="uptime-bars" id="${id}" viewBox="0 0 900 34" preserveAspectRatio="none" role="img" aria-labelledby="${id}-title ${id}-desc"><title id="${id}-title">${caption}</title><desc id="${id}-desc">${summary}</desc>${bars}</svg>`;
}

export interface LatencyPoint {
  /** Axis and table label, e.g. "05-04" or "13:00". */
  label: string;
  p50: number | null;
  p95: number | null;
}

/** A "nice" upper bound for the axis: 1, 2, 2.5 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 10;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= value) return m * power;
  return 10 * power;
}

const P50_COLOR = '#0969da';
const P95_COLOR = '#bc4c00';

export interface LatencyLegend {
  p50: string;
  /** null when the chart has one series only (single probes have no percentiles). */
  p95: string | null;
}

const PERCENTILES: LatencyLegend = { p50: 'p50 (median)', p95: 'p95' };

/** p50 and p95 lines over time; gaps where a period had no answering probe. */
export function latencyChart(
  points: readonly LatencyPoint[],
  id: string,
  caption: string,
  legend: LatencyLegend = PERCENTILES,
): Html {
  const W = 900;
  const H = 260;
  const left = 64;
  const right = 16;
  const top = 14;
  const bottom = 34;
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const values = points.flatMap((p) => [p.p50, p.p95]).filter((v): v is number => v !== null);
  const max = niceMax(Math.max(...values, 1));
  const x = (i: number) => left + (points.length === 1 ? plotW / 2 : (i * plotW) / (points.length - 1));
  const y = (v: number) => top + plotH - (v / max) * plotH;

  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = max * f;
    return html`<line x1="${left}" x2="${W - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#d8dee4" stroke-width="1"/><text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="12" fill="#57606a">${formatMs(v)}</text>`;
  });
  // at most eight labels, evenly spread, always the first and the last
  const labelCount = Math.min(points.length, 8);
  const labelled = new Set(
    Array.from({ length: labelCount }, (_, k) =>
      labelCount === 1 ? 0 : Math.round((k * (points.length - 1)) / (labelCount - 1)),
    ),
  );
  const xLabels = points.map((p, i) =>
    labelled.has(i)
      ? html`<text x="${x(i).toFixed(1)}" y="${H - 10}" text-anchor="middle" font-size="12" fill="#57606a">${p.label}</text>`
      : '',
  );

  const series = (key: 'p50' | 'p95', color: string, dashed: boolean) => {
    // one path with a move-to after every gap, so missing periods are not bridged by a line
    let d = '';
    let pen = false;
    points.forEach((p, i) => {
      const v = p[key];
      if (v === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)} `;
      pen = true;
    });
    const dots = points.map((p, i) =>
      p[key] === null
        ? ''
        : html`<circle cx="${x(i).toFixed(1)}" cy="${y(p[key]!).toFixed(1)}" r="3" fill="${color}"><title>${p.label}: ${key === 'p50' ? legend.p50 : legend.p95} ${formatMs(p[key])}</title></circle>`,
    );
    return html`<path d="${d.trim()}" fill="none" stroke="${color}" stroke-width="2.25" stroke-linejoin="round"${dashed ? raw(' stroke-dasharray="6 4"') : ''}/>${dots}`;
  };

  const range = (key: 'p50' | 'p95') => {
    const vs = points.map((p) => p[key]).filter((v): v is number => v !== null);
    return vs.length ? `${formatMs(Math.min(...vs))} to ${formatMs(Math.max(...vs))}` : 'no data';
  };
  const desc = `${caption}. ${legend.p50} ranged from ${range('p50')}${legend.p95 ? `; ${legend.p95} from ${range('p95')}` : ''}.`;

  return html`<svg class="chart" id="${id}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-title ${id}-desc">
<title id="${id}-title">${caption}</title><desc id="${id}-desc">${desc}</desc>
${grid}
<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#8c959f" stroke-width="1"/>
${xLabels}
${series('p95', P95_COLOR, true)}
${series('p50', P50_COLOR, false)}
</svg>
<ul class="legend" aria-hidden="true"><li><span class="swatch swatch-p50"></span>${legend.p50}</li>${legend.p95 ? html`<li><span class="swatch swatch-p95"></span>${legend.p95}</li>` : ''}</ul>`;
}
