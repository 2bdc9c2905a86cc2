import { jobIds } from '@observatory/queue';
import { analyzeDirty, createJobHandlers, createServices, type Services } from '@observatory/service';
import { createTestRuntime, type TestRuntime, type TestRuntimeOptions } from '@observatory/service/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../src/app.ts';

/**
 * Shared set-up of the api-*.test.ts files: the app on a fresh runtime, keys, problem checks,
 * and probe data made through the real code path (the probe job handler and the analyzer).
 */

/** The two ways the observatory runs: distributed (Postgres + Redis) and embedded (PGlite, in-process jobs). */
export const MODES = [
  { mode: 'postgres+redis', options: { database: 'postgres', redis: true } },
  { mode: 'embedded', options: { database: 'embedded' } },
] as const satisfies ReadonlyArray<{ mode: string; options: TestRuntimeOptions }>;

export interface ApiHarness {
  runtime: TestRuntime;
  services: Services;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** The app on its own database (and Redis prefix); close() drops both. */
export async function startApi(options: TestRuntimeOptions): Promise<ApiHarness> {
  const runtime = await createTestRuntime(options);
  const services = await createServices(runtime);
  const app = await buildApp(runtime, { logRequests: false, services });
  return {
    runtime,
    services,
    app,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

export const ANONYMOUS_REQUEST = { type: 'anonymous', requested_credential_type: 'api_key' } as const;

/** A fresh anonymous key; `remoteAddress` keeps tests clear of each other's per-address limit. */
export async function issueKey(app: FastifyInstance, remoteAddress = '198.51.100.1'): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/agent/auth',
    payload: ANONYMOUS_REQUEST,
    remoteAddress,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().api_key as string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  [member: string]: unknown;
}

/** Asserts an RFC 9457 answer with this status and returns its body. */
export function expectProblem(res: LightMyRequestResponse, status: number): ProblemBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as ProblemBody;
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
  return body;
}

/** What an agent sends as the path segment of /agent-query. */
export const agentQueryPath = (server: string) => `/agent-query/${encodeURIComponent(server)}`;

/**
 * `times` real probes of each registered server (distinct slots in the last hour, as the
 * scheduler would have claimed them), stored by the probe job's batch writer, then one analyzer
 * pass — the path probe data takes in production.
 */
export async function probeServers(h: ApiHarness, serverUrls: string[], times: number): Promise<void> {
  const { handlers, probeJobs } = createJobHandlers(h.services);
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const jobs = [];
  for (const url of serverUrls) {
    const server = await h.runtime.repos.servers.findByUrl(url);
    if (!server) throw new Error(`not registered: ${url}`);
    for (let i = 0; i < times; i++) {
      const slot = new Date(minute - i * 60_000);
      jobs.push(
        handlers.probe!(
          { serverId: server.id, url: server.url, slot: slot.toISOString() },
          { jobId: jobIds.probe(server.id, slot), attempt: 1 },
        ),
      );
    }
  }
  await Promise.all(jobs);
  await probeJobs.drain();
  await analyzeDirty(h.runtime.db.sql);
}

/** Rows in a table, read straight from the database (not through the API under test). */
export async function countRows(
  h: ApiHarness,
  table: 'interaction_reports' | 'servers' | 'receipts',
): Promise<number> {
  const [row] = await h.runtime.db.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM ${h.runtime.db.sql(table)}`;
  return row!.n;
}

export interface RouteEntry {
  method: string;
  /** As Fastify knows it: `/agent-query/*`, `/servers/:slug`. */
  path: string;
}

/**
 * Every route the app serves (HEAD left out: Fastify adds it to each GET), read from
 * printRoutes' radix tree — so a route added tomorrow is in the list without anyone editing a
 * test. Each tree line is `<4 columns per depth>├── <segment> (<METHODS>)`; a segment continues
 * its parent's path.
 */
export function listRoutes(app: FastifyInstance): RouteEntry[] {
  const prefixes: string[] = [];
  const routes: RouteEntry[] = [];
  for (const line of app.printRoutes().split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (prefixes[depth - 1] ?? '') + m[2]!;
    prefixes[depth] = path;
    for (const method of m[3]?.split(', ') ?? []) {
      if (method !== 'HEAD') routes.push({ method, path });
    }
  }
  return routes;
}
