import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LedgerEntry, tally } from '../../scripts/lib/load-generator.ts';
import { badAnswers, type Reconciliation, reconcile } from '../../scripts/lib/reconcile.ts';
import {
  duplicateProbes,
  type FaultStack,
  type ObservatoryProcess,
  serversProbedSince,
  sleep,
  startFaultStack,
  until,
} from './fault-stack.ts';

// Postgres crashes under load (pg_ctl stop -m immediate: every backend killed, crash recovery
// on start) and comes back 4 s later. The scenario runs once; each `it` checks one promise.
const OUTAGE_MS = 4_000;
// A request still unanswered after this long counts as hung: while Postgres is away the API
// must refuse at once (503), not hold requests until it returns.
const ANSWER_WITHIN_MS = 3_000;

interface Outcome {
  ledger: LedgerEntry[];
  downAt: number;
  upAt: number;
  /** When /api/trust first answered 200 again (null: never, within the wait). */
  recoveredAt: number | null;
  /** Servers probed again after Postgres came back. */
  reprobed: Set<number>;
  counts: Reconciliation;
  duplicates: number;
  aliveAfter: Record<string, boolean>;
  exits: Record<string, { code: number | null; signal: NodeJS.Signals | null }>;
  /** The API's "unhandled error" log lines (a 500's cause), shown when a check fails. */
  apiErrors: string[];
  /** The API's last log lines (LOG_LEVEL=warn), shown when it did not exit cleanly. */
  apiTail: string;
}

describe('Postgres restarted during load (distributed mode)', () => {
  let stack: FaultStack;
  let outcome: Outcome;

  beforeAll(async () => {
    stack = await startFaultStack({ servers: 20 });
    const { api, worker, scheduler, url, load } = await stack.startUnderLoad({ timeoutMs: ANSWER_WITHIN_MS });
    const trustUrl = `${url}/api/trust?url=${encodeURIComponent(stack.servers[0]!.url)}`;
    await sleep(2_000);

    const downAt = Date.now();
    await stack.pg.stop('immediate');
    await sleep(OUTAGE_MS);
    const upAt = Date.now();
    await stack.pg.start();

    // Wait for the API to answer again (unless it died) and for the workers to probe every
    // server again, both at once.
    let recoveredAt: number | null = null;
    const back = new Date(upAt);
    await Promise.allSettled([
      until(
        async () =>
          !api.alive() || (await fetch(trustUrl, { signal: AbortSignal.timeout(1_000) })).status === 200,
        25_000,
        'the API to answer again',
      ).then(() => {
        if (api.alive()) recoveredAt = Date.now();
      }),
      until(
        async () => (await serversProbedSince(stack.db, back)).size === stack.servers.length,
        25_000,
        'every server to be probed again',
      ),
    ]);
    await sleep(1_000); // load on the recovered service
    await load.stop();

    const procs: ObservatoryProcess[] = [api, worker, scheduler];
    const aliveAfter = Object.fromEntries(procs.map((p) => [p.role, p.alive()]));
    const exits: Outcome['exits'] = {};
    // a worker may take PROBE_TIMEOUT_MS + 2 s to let its probes finish, then closes its pool
    for (const p of procs.reverse()) exits[p.role] = await p.stop(15_000);
    outcome = {
      ledger: load.ledger,
      downAt,
      upAt,
      recoveredAt,
      reprobed: await serversProbedSince(stack.db, back),
      counts: await reconcile(stack.db, load.ledger),
      duplicates: await duplicateProbes(stack.db),
      aliveAfter,
      exits,
      apiErrors: api
        .output()
        .split('\n')
        .filter((line) => line.includes('unhandled error')),
      apiTail: api.output().split('\n').slice(-30).join('\n'),
    };
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('never acknowledges a report it then loses; every receipt handed out is stored', () => {
    const { counts } = outcome;
    expect(counts.reportsAcknowledged).toBeGreaterThan(20);
    expect(counts.acknowledgedLost).toEqual([]);
    expect(counts.strayOrDuplicateRows).toBe(0);
    // refused reports may have been stored all the same (commit done, answer lost); counted
    expect(counts.reportsStored).toBe(counts.reportsAcknowledged + counts.refusedButStored);
    expect(counts.receiptsLost).toEqual([]);
  });

  it('workers and the scheduler retry by themselves: every server is probed again, none twice', () => {
    expect(outcome.aliveAfter.worker).toBe(true);
    expect(outcome.aliveAfter.scheduler).toBe(true);
    expect(outcome.reprobed.size).toBe(stack.servers.length);
    expect(outcome.duplicates).toBe(0);
    expect(outcome.exits.worker).toEqual({ code: 0, signal: null });
    expect(outcome.exits.scheduler).toEqual({ code: 0, signal: null });
  });

  // Both halves once failed: postgres.js crashed the process from a setImmediate after a
  // connection closed (patched, see patches/), and queued queries until Postgres returned
  // (the API now refuses at once while the database watchdog finds it away).
  it('stays up, refuses with 503 problems (never hangs) while Postgres is away, recovers by itself', () => {
    const { ledger, downAt, upAt, recoveredAt, aliveAfter, exits, apiErrors, apiTail } = outcome;
    expect(aliveAfter.api).toBe(true);
    expect(exits.api, apiTail).toEqual({ code: 0, signal: null });
    const outage = ledger.filter((e) => e.sentAt >= downAt && e.sentAt < upAt);
    expect(tally(outage)['read 503']).toBeGreaterThan(OUTAGE_MS / 200);
    // the only refusal allowed is a 503 problem, answered at once: no other 5xx, no hang
    expect(badAnswers(ledger, true), JSON.stringify({ answers: tally(ledger), apiErrors })).toEqual([]);
    expect(recoveredAt).not.toBeNull();
    const recovered = ledger.filter((e) => e.sentAt >= recoveredAt!);
    expect(badAnswers(recovered, false), JSON.stringify(tally(recovered))).toEqual([]);
  });
});
