import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Database } from '@observatory/db';

export interface FleetProcess {
  child: ChildProcess;
  urls: string[];
  statsUrl: string;
}

/**
 * A testkit fleet in its own process (so its CPU and memory are not the caller's), e.g.
 * `['healthy=280', 'slow=20', '--slow-ms', '800']`; resolves once it has printed its servers.
 */
export async function startFleetProcess(plan: string[]): Promise<FleetProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/testkit/src/cli.ts', '--json', ...plan],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fleet exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const info = JSON.parse(line) as { statsUrl: string; servers: Array<{ url: string }> };
  return { child, urls: info.servers.map((s) => s.url), statsUrl: info.statsUrl };
}

/** Registers the fleet's servers in one statement, slugs `<slugPrefix>-1`, `<slugPrefix>-2`, … */
export async function registerFleet(db: Database, urls: string[], slugPrefix: string): Promise<void> {
  await db.sql`
    INSERT INTO servers (url, slug, name, category, source)
    SELECT u, ${slugPrefix} || '-' || n, ${slugPrefix} || ' ' || n, 'other', 'registered'
    FROM unnest(${urls}::text[]) WITH ORDINALITY AS t(u, n)`;
}
