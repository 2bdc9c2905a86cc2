import net from 'node:net';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { type WatchdogClient, watchAvailability } from '../src/availability.ts';
import { createTestDatabase } from '../src/test-database.ts';

/** A loopback port with nothing listening on it (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('database availability watchdog', () => {
  it('says available while Postgres answers', async () => {
    const db = await createTestDatabase();
    const watch = watchAvailability(db.url, { intervalMs: 50 });
    try {
      await watch.settled();
      expect(watch.available).toBe(true);
    } finally {
      await watch.stop();
      await db.drop();
    }
  });

  it('starts over on a new client when a check never settles (a query stuck in the driver)', async () => {
    const db = await createTestDatabase();
    const events: string[] = [];
    // the first client takes the query and never answers, as postgres.js did once after a restart
    const stuck = Object.assign(() => new Promise<never>(() => {}), {
      end: async () => {
        events.push('stuck client ended');
      },
    }) as unknown as WatchdogClient;
    const watch = watchAvailability(db.url, {
      intervalMs: 20,
      downIntervalMs: 20,
      timeoutMs: 100,
      stuckMs: 300,
      connect: (url) => {
        events.push('client made');
        if (events.length === 1) return stuck;
        return postgres(url, { max: 1, onnotice: () => {} }) as unknown as WatchdogClient;
      },
    });
    try {
      await watch.settled();
      expect(watch.available).toBe(false);
      for (let waited = 0; !watch.available && waited < 5_000; waited += 20) await watch.settled();
      expect(watch.available).toBe(true);
      expect(events).toEqual(['client made', 'client made', 'stuck client ended']);
    } finally {
      await watch.stop();
      await db.drop();
    }
  });

  it('says unavailable when nothing answers, and reports the change once', async () => {
    const changes: boolean[] = [];
    const watch = watchAvailability(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`, {
      downIntervalMs: 20,
      timeoutMs: 500,
      onChange: (available) => changes.push(available),
    });
    try {
      await watch.settled();
      await watch.settled();
      expect(watch.available).toBe(false);
      expect(changes).toEqual([false]);
    } finally {
      await watch.stop();
    }
  });
});
