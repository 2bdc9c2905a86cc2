/**
 * The load of api-load.test.ts, run in a process of its own (a crash of the storage layer must
 * end this process, not the test run): the app in embedded mode (PGlite, one database session),
 * driven in-process by concurrent clients of every kind of request that touches the database,
 * for LOAD_MS. Prints one JSON line: the statuses seen, the reports acknowledged (202) and the
 * reports stored. Run: node --import tsx apps/api/test/api-load-worker.ts
 */
import { createServices, generateApiKey } from '@observatory/service';
import { createTestRuntime } from '@observatory/service/testing';
import { buildApp } from '../src/app.ts';

const LOAD_MS = Number(process.env.LOAD_MS ?? 3_000);
/** Clients per kind: together far more queries in flight than the session's pipeline holds (100). */
const CLIENTS = { trust: 100, agentQuery: 50, register: 25, report: 100 };
const SERVER_URL = 'https://load.example.com/mcp';

const runtime = await createTestRuntime({ database: 'embedded' });
const app = await buildApp(runtime, { logRequests: false, services: await createServices(runtime) });
await runtime.repos.servers.upsert({ url: SERVER_URL, name: 'Load', category: 'data', source: 'registered' });
const key = generateApiKey();
await runtime.repos.apiKeys.insert({
  prefix: key.displayPrefix,
  secretSha256: key.sha256,
  scopes: ['trust:read'],
  trialLimit: 1_000_000,
  createdIpHash: null,
});

const requests = {
  // an untracked server each time: a database lookup per request (found ones are cached)
  trust: (client: number, i: number) => ({
    url: `/api/trust?url=${encodeURIComponent(`https://untracked-${client}-${i}.example.com/mcp`)}`,
  }),
  agentQuery: () => ({
    url: `/agent-query/${encodeURIComponent(SERVER_URL)}`,
    headers: { authorization: `Bearer ${key.key}` },
  }),
  // audited in a transaction of its own
  register: (client: number, i: number) => ({
    method: 'POST' as const,
    url: '/api/register',
    payload: { server_url: `https://registered-${client}-${i}.example.com/mcp`, name: `Load ${client}-${i}` },
  }),
  report: (client: number) => ({
    method: 'POST' as const,
    url: '/api/report',
    payload: { server_url: SERVER_URL, success: client % 2 > 0, latency_ms: client },
  }),
};

const statuses: Record<string, number> = {};
let acknowledged = 0;
const until = Date.now() + LOAD_MS;
await Promise.all(
  Object.entries(CLIENTS).flatMap(([kind, n]) =>
    Array.from({ length: n }, async (_, client) => {
      const next = requests[kind as keyof typeof requests];
      for (let i = 0; Date.now() < until; i++) {
        const res = await app.inject(next(client, i));
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (kind === 'report' && res.statusCode === 202) acknowledged += 1;
      }
    }),
  ),
);
const [row] = await runtime.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM interaction_reports`;
process.stdout.write(`${JSON.stringify({ statuses, acknowledged, stored: row?.n ?? 0 })}\n`);
await app.close();
await runtime.close();
