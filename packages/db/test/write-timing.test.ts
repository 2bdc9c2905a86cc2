import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelinedTransaction } from '../src/client.ts';
import { createTestDatabase, type TestDatabase } from '../src/test-database.ts';

// patches/postgres+3.4.9.patch: postgres.js sends small messages at the end of the current
// tick, not in the next event-loop iteration. Under load that iteration waits for every socket
// the API has to serve, and a pipelined transaction's COMMIT, queued right behind a statement
// big enough to go out at once, waited for it while the transaction held the audit log's lock.
// Here the loop is kept busy by an immediate queued first, as a loaded API's would be.

/** Queues an immediate that keeps the event loop busy for `ms`; resolves to when it ended. */
function busyLoopTurn(ms: number): Promise<number> {
  return new Promise((resolve) =>
    setImmediate(() => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        // the event loop serving other sockets
      }
      resolve(Date.now());
    }),
  );
}

describe('postgres.js writes', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 1 });
    await db.sql`SELECT 1`; // connected, and the statements below prepared once
    await db.sql`CREATE TABLE write_timing (at timestamptz, pad text)`;
  });
  afterAll(async () => db?.drop());

  it('send a small query before the event loop takes its next turn', async () => {
    await db.sql`SELECT clock_timestamp() AS at`; // prepared
    const busyUntil = busyLoopTurn(300);
    const [row] = await db.sql<{ at: Date }[]>`SELECT clock_timestamp() AS at`;
    expect(row!.at.getTime()).toBeLessThan(await busyUntil);
  });

  it('send a pipelined COMMIT with the statements before it, not a loop turn later', async () => {
    const commitStatement = async () => {
      let busyUntil: Promise<number> | undefined;
      await pipelinedTransaction(db.sql, async (tx) => {
        busyUntil = busyLoopTurn(300);
        return {
          result: null,
          inFlight: [
            // over 1 KB: written at once, and the COMMIT behind it is small
            tx`INSERT INTO write_timing VALUES (clock_timestamp(), ${'x'.repeat(2000)})`.execute(),
            tx`INSERT INTO write_timing VALUES (clock_timestamp(), '')`.execute(),
          ],
        };
      });
      const [row] = await db.sql<{ at: Date }[]>`
        SELECT max(at) AS at FROM write_timing`;
      return { committedBy: row!.at.getTime(), busyUntil: await busyUntil! };
    };
    await commitStatement(); // statements prepared
    const { committedBy, busyUntil } = await commitStatement();
    expect(committedBy).toBeLessThan(busyUntil);
  });
});
