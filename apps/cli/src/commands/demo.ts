import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiServer } from '@observatory/api-app';
import { startScheduler } from '@observatory/scheduler-app';
import { createServices } from '@observatory/service';
import { type Behaviour, startFleet } from '@observatory/testkit';
import { startWorker } from '@observatory/worker-app';
import type { Command } from 'commander';
import { runService } from '../lifecycle.ts';

/** The demo fleet: one server per behaviour a newcomer should see judged. */
export const DEMO_FLEET: ReadonlyArray<{
  label: string;
  name: string;
  category: string;
  description: string;
  behaviour: Behaviour;
}> = [
  {
    label: 'healthy',
    name: 'Demo Weather',
    category: 'weather',
    description: 'Answers every MCP handshake at once.',
    behaviour: 'healthy',
  },
  {
    label: 'slow',
    name: 'Demo Search',
    category: 'search',
    description: 'Answers, but takes 1.5 s for every request.',
    behaviour: { kind: 'slow', delayMs: 1_500 },
  },
  {
    label: 'flaky',
    name: 'Demo Finance',
    category: 'finance',
    description: 'Fails one request in seven with HTTP 500 (a probe makes several).',
    behaviour: { kind: 'flaky', failRate: 0.15 },
  },
  {
    label: 'dead',
    name: 'Demo Data',
    category: 'data',
    description: 'Drops every connection without answering.',
    behaviour: 'dead',
  },
  {
    label: 'not MCP',
    name: 'Demo Code',
    category: 'code',
    description: 'A web page, not an MCP server.',
    behaviour: 'html',
  },
];

/**
 * Settings the demo needs before the configuration is read: probes may reach the loopback
 * fleet, a short interval so verdicts form within a minute, and a throwaway embedded store
 * (the fleet's ports change every run, so its data is worth nothing afterwards).
 */
function prepareDemoEnvironment(env: NodeJS.ProcessEnv): string[] {
  const notes: string[] = [];
  for (const name of ['DATABASE_URL', 'REDIS_URL'] as const) {
    if (env[name]) {
      notes.push(`${name} is ignored: the demo always runs embedded, with throwaway data.`);
      delete env[name];
    }
  }
  env.PROBE_ALLOW_PRIVATE_NETWORKS = 'true';
  // 5 s (the shortest allowed): the ten probes a PASS needs take under a minute
  env.PROBE_INTERVAL_S ??= '5';
  if (!env.DATA_DIR) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'observatory-demo-'));
    env.DATA_DIR = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return notes;
}

export function registerDemoCommand(program: Command) {
  program
    .command('demo')
    .description('Run the observatory with a local fleet of test MCP servers and watch verdicts form')
    .action(async () => {
      const notes = prepareDemoEnvironment(process.env);
      await runService(
        'observatory-demo',
        async (runtime) => {
          const fleet = await startFleet();
          const services = await createServices(runtime);
          await startWorker(services);
          const scheduler = startScheduler(runtime);
          const api = await startApiServer(runtime, services);
          const lines: string[] = [];
          let firstSlug = '';
          for (const server of DEMO_FLEET) {
            const { url } = fleet.add(server.behaviour);
            const registered = await services.registration.register({
              server_url: url,
              name: server.name,
              category: server.category,
              description: server.description,
            });
            firstSlug ||= registered.slug;
            lines.push(`    ${server.label.padEnd(8)} ${api.url}/servers/${registered.slug}`);
          }
          process.stdout.write(
            [
              ...notes,
              `MCP Trust Observatory demo: ${DEMO_FLEET.length} local MCP servers on ${fleet.baseUrl}, probed every ${runtime.config.PROBE_INTERVAL_S} s.`,
              '',
              `  Dashboard:    ${api.url}/`,
              '  Status pages:',
              ...lines,
              `  Badges:       ${api.url}/badge/${firstSlug}.svg`,
              `  Metrics:      ${api.url}/metrics`,
              `  API:          ${api.url}/api/leaderboard   ${api.url}/docs`,
              '',
              'Verdicts form as probes arrive: FAIL within half a minute, PASS after ten probes (about 90 s).',
              'Ctrl-C stops the demo; its data is thrown away.',
              '',
            ].join('\n'),
          );
          return [() => fleet.close(), () => scheduler.close(), () => api.close()];
        },
        { servesRequests: true },
      );
    });
}
