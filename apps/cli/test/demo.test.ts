import { describe, expect, it } from 'vitest';
import { runCli } from './cli-process.ts';

interface LeaderboardEntry {
  name: string;
  verdict: string;
  last_outcome: string | null;
}

/** Values of one metric from Prometheus text, keyed by their label set. */
function metric(text: string, name: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m) values.set(m[1] ?? '', Number(m[2]));
  }
  return values;
}

describe('observatory demo', () => {
  it('starts a local fleet, registers it, prints where to watch, and probes it at once', async () => {
    const demo = runCli(['demo'], { PORT: '0', HOST: '127.0.0.1' });
    try {
      const [, base] = await demo.waitFor(/Dashboard: +(http:\/\/\S+)\//, 60_000);
      const out = demo.output();
      expect(out).toContain('probed every 5 s');
      for (const label of ['healthy', 'slow', 'flaky', 'dead', 'not MCP']) {
        expect(out).toMatch(
          new RegExp(`^ {4}${label} +http://127\\.0\\.0\\.1:\\d+/servers/demo-[a-z]+$`, 'm'),
        );
      }

      // wait (bounded) until every demo server has been probed at least once
      const deadline = Date.now() + 45_000;
      let board: LeaderboardEntry[] = [];
      while (Date.now() < deadline) {
        const res = await fetch(`${base}/api/leaderboard?limit=50`);
        board = ((await res.json()) as { servers: LeaderboardEntry[] }).servers;
        if (board.length === 5 && board.every((s) => s.last_outcome !== null)) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const outcome = Object.fromEntries(board.map((s) => [s.name, s.last_outcome]));
      expect(outcome['Demo Weather']).toBe('up');
      expect(outcome['Demo Data']).toBe('down');
      expect(outcome['Demo Code']).toBe('not_mcp');

      const page = await fetch(`${base}/servers/demo-weather`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<h1 id="server-name">Demo Weather</h1>');

      // one process has it all: probes, scheduler, queue and HTTP metrics
      const text = await (await fetch(`${base}/metrics`)).text();
      const probes = metric(text, 'observatory_probes_total');
      expect(probes.get('{outcome="up"}')).toBeGreaterThanOrEqual(1);
      expect(probes.get('{outcome="down"}')).toBeGreaterThanOrEqual(1);
      expect(probes.get('{outcome="not_mcp"}')).toBeGreaterThanOrEqual(1);
      expect(metric(text, 'observatory_scheduler_ticks_total').get('')).toBeGreaterThan(0);
      expect(metric(text, 'observatory_scheduler_dispatched_total').get('')).toBeGreaterThanOrEqual(5);
      expect(metric(text, 'observatory_scheduler_lag_seconds').get('')).toBeGreaterThanOrEqual(0);
      expect(
        metric(text, 'observatory_queue_jobs').get('{queue="probe",state="waiting"}'),
      ).toBeGreaterThanOrEqual(0);
      expect(metric(text, 'observatory_queue_up').get('')).toBe(1);
      expect(metric(text, 'observatory_http_request_duration_seconds_count').size).toBeGreaterThan(0);
    } finally {
      demo.child.kill('SIGINT');
      const { code } = await demo.exited;
      expect(code).toBe(0);
    }
    expect(demo.output()).toContain('stopped cleanly');
  }, 120_000);
});
