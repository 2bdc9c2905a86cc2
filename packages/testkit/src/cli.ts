/**
 * Starts a testkit fleet from the command line, for demos and as a benchmark child process.
 *
 *   npx tsx packages/testkit/src/cli.ts healthy=20 slow=5 auth=1 [--slow-ms 2000] [--fail-rate 0.3]
 *                                       [--port 0] [--sdk-healthy] [--seed 1] [--json]
 *
 * Prints the fleet's URLs (with --json: one JSON line {ready, baseUrl, port, statsUrl, servers:
 * [{id, url, behaviour}]}) and serves until SIGINT/SIGTERM. GET statsUrl (its own port, so it
 * never counts as fleet traffic) answers {requests, cpu_user_us, cpu_system_us, rss_bytes}: a
 * benchmark can charge the fleet's CPU to the fleet.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { BEHAVIOUR_NAMES, type Behaviour, type BehaviourName } from './behaviours.ts';
import { startFleet } from './fleet.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: 'string', default: '0' },
    'slow-ms': { type: 'string' },
    'fail-rate': { type: 'string' },
    seed: { type: 'string', default: '1' },
    'sdk-healthy': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const plan: Array<{ name: BehaviourName; count: number }> = (
  positionals.length ? positionals : ['healthy=10']
).map((arg) => {
  const [name = '', count = '1'] = arg.split('=');
  if (!BEHAVIOUR_NAMES.includes(name as BehaviourName))
    fail(`unknown behaviour "${name}"; one of: ${BEHAVIOUR_NAMES.join(', ')}`);
  const n = Number(count);
  if (!Number.isInteger(n) || n < 0) fail(`bad count in "${arg}"`);
  return { name: name as BehaviourName, count: n };
});

function behaviourFor(name: BehaviourName): Behaviour {
  if (name === 'slow' && values['slow-ms']) return { kind: 'slow', delayMs: Number(values['slow-ms']) };
  if (name === 'flaky' && values['fail-rate'])
    return { kind: 'flaky', failRate: Number(values['fail-rate']) };
  return name;
}

const fleet = await startFleet({
  port: Number(values.port),
  sdkHealthy: values['sdk-healthy'],
  seed: Number(values.seed),
});
const servers: Array<{ id: string; url: string; behaviour: BehaviourName }> = [];
for (const { name, count } of plan) {
  for (let i = 0; i < count; i++) servers.push({ ...fleet.add(behaviourFor(name)), behaviour: name });
}

// Stats live on their own port so they never count as fleet traffic or share its sockets.
const statsServer = createServer((_req, res) => {
  const cpu = process.cpuUsage();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      requests: fleet.stats().requests,
      cpu_user_us: cpu.user,
      cpu_system_us: cpu.system,
      rss_bytes: process.memoryUsage.rss(),
    }),
  );
});
await new Promise<void>((resolve) => statsServer.listen(0, '127.0.0.1', resolve));
const statsUrl = `http://127.0.0.1:${(statsServer.address() as AddressInfo).port}/_fleet/stats`;

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ ready: true, baseUrl: fleet.baseUrl, port: fleet.port, statsUrl, servers })}\n`,
  );
} else {
  process.stdout.write(`testkit fleet on ${fleet.baseUrl} (stats: ${statsUrl})\n`);
  for (const server of servers) process.stdout.write(`${server.behaviour.padEnd(15)} ${server.url}\n`);
  process.stdout.write('Ctrl-C to stop.\n');
}

const stop = async (): Promise<void> => {
  statsServer.close();
  await fleet.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
