import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { watchAvailability } from '../src/availability.ts';
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
