import type { ProbeOutcome } from './probe-result.ts';
import { repeat, runTimeline, START, type TimelineOptions } from './probe-timeline.test-support.ts';
import { assessTrust, type TrustAssessment } from './trust-score.ts';

/**
 * Test support: the worked examples of docs/scoring.md, computed by the real code. The doc
 * test checks that the table in the doc is exactly this one; print it with
 * `npx tsx -e "import('./packages/core/src/scoring-examples.test-support.ts').then(m => console.log(m.renderWorkedExamples()))"`.
 */

function last(
  steps: (ProbeOutcome | { outcome: ProbeOutcome; latencyMs: number })[],
  options?: TimelineOptions,
) {
  return runTimeline(steps, options).at(-1)!.assessment;
}

const ninetyPercent = Array.from({ length: 288 }, (_, i): ProbeOutcome => (i % 10 === 9 ? 'down' : 'up'));
/** 3 of every 10 probes fail, spread out. */
const FLAKY: ProbeOutcome[] = ['up', 'up', 'down', 'up', 'up', 'down', 'up', 'up', 'up', 'down'];
const flaky = (n: number) => Array.from({ length: n }, (_, i) => FLAKY[i % FLAKY.length]!);

export function workedExamples(): [string, TrustAssessment][] {
  return [
    ['New healthy server (120 ms), after 1 probe', last(['up'])],
    ['… after 5 probes', last(repeat('up', 5))],
    ['… after 10 probes', last(repeat('up', 10))],
    ['… after a day (288 probes)', last(repeat('up', 288))],
    [
      '… after a day, plus 38 of 40 reports successful',
      last(repeat('up', 288), { reports: { total: 40, successes: 38 } }),
    ],
    [
      'Healthy but slow (5 s; category ≈ 190 ms), a day',
      last(repeat({ outcome: 'up', latencyMs: 5000 }, 288)),
    ],
    ['Every 10th probe fails (90 %), a day', last(ninetyPercent)],
    ['30 %-flaky server, after 10 probes', last(flaky(10))],
    ['30 %-flaky server, after a day', last(flaky(288))],
    ['Healthy day, then its first failed probe', last([...repeat<ProbeOutcome>('up', 288), 'down'])],
    ['… second failed probe in a row (dead)', last([...repeat<ProbeOutcome>('up', 288), 'down', 'down'])],
    ['… dead for 6 hours', last([...repeat<ProbeOutcome>('up', 288), ...repeat<ProbeOutcome>('down', 72)])],
    ['Answers HTTP but not MCP, 2 probes', last(['not_mcp', 'not_mcp'])],
    ['Requires authorization, a day', last(repeat<ProbeOutcome>('auth_required', 288))],
    [
      'Reports only: 38 of 40 successful, never probed',
      assessTrust({
        now: START,
        probes: { total: 0, up: 0 },
        reports: { total: 40, successes: 38 },
        latestProbe: null,
        lastUpAt: null,
        consecutiveFailures: 0,
        latency: null,
        categoryBaseline: null,
      }),
    ],
    [
      'Unknown server: no probe, no report',
      assessTrust({
        now: START,
        probes: { total: 0, up: 0 },
        reports: { total: 0, successes: 0 },
        latestProbe: null,
        lastUpAt: null,
        consecutiveFailures: 0,
        latency: null,
        categoryBaseline: null,
      }),
    ],
  ];
}

const cell = (c: { value: number } | null) => (c ? c.value.toFixed(3) : '—');

export function renderWorkedExamples(): string {
  const rows = workedExamples().map(([name, a]) =>
    [
      name,
      a.verdict,
      a.score === null ? '—' : a.score.toFixed(1),
      `\`${a.reason_code}\``,
      a.evidence,
      a.confidence.toFixed(2),
      cell(a.components.availability),
      cell(a.components.reported_success),
      cell(a.components.latency),
      cell(a.components.freshness),
    ].join(' | '),
  );
  return [
    '| Scenario | Verdict | Score | reason_code | evidence | Confidence | Avail. | Reports | Latency | Fresh. |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}
