import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BullmqQueue, InProcessQueue, type JobContext, type JobQueue, jobIds } from '../src/index.ts';
import { deleteQueueKeys } from '../src/testing.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefixes: string[] = [];
const uniquePrefix = () => {
  const p = `obs-test-${randomBytes(6).toString('hex')}`;
  prefixes.push(p);
  return p;
};
afterAll(async () => {
  for (const p of prefixes) await deleteQueueKeys(REDIS_URL, p);
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const payload = (serverId: number) => ({
  serverId,
  url: `http://127.0.0.1/s/${serverId}`,
  slot: new Date(0).toISOString(),
});

// The same behavioural contract, run against both implementations.
describe.each([
  ['in-process', () => new InProcessQueue()],
  ['bullmq', () => new BullmqQueue({ redisUrl: REDIS_URL, prefix: uniquePrefix() })],
] as const)('%s queue', (_kind, make) => {
  let queue: JobQueue;
  afterEach(async () => {
    await queue?.close(2_000);
  });

  it('runs every job once and never more than `concurrency` at a time', async () => {
    queue = make();
    let active = 0;
    let maxActive = 0;
    const seen: number[] = [];
    await queue.consume(
      {
        probe: async (p) => {
          active += 1;
          maxActive = Math.max(maxActive, active);
          await new Promise((r) => setTimeout(r, 15));
          seen.push(p.serverId);
          active -= 1;
        },
      },
      { probe: 3 },
    );
    await queue.enqueue(
      'probe',
      Array.from({ length: 20 }, (_, i) => ({
        id: jobIds.probe(i + 1, new Date(0)),
        payload: payload(i + 1),
      })),
    );
    await until(() => seen.length === 20);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(maxActive).toBeLessThanOrEqual(3);
    expect(maxActive).toBeGreaterThan(1);
  });

  it('drops a job whose id it already has', async () => {
    queue = make();
    const runs: string[] = [];
    await queue.consume({ probe: async (_p, ctx: JobContext) => void runs.push(ctx.jobId) }, { probe: 2 });
    const job = { id: jobIds.probe(7, new Date(1_000)), payload: payload(7) };
    await queue.enqueue('probe', [job, job]);
    await queue.enqueue('probe', [job]);
    await until(() => runs.length >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(runs).toEqual([job.id]);
  });

  it('retries a handler that throws, then succeeds', async () => {
    queue = make();
    const attempts: number[] = [];
    await queue.consume(
      {
        analyze: async (_p, ctx) => {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 2) throw new Error('database away');
        },
      },
      { analyze: 1 },
    );
    await queue.enqueue('analyze', [{ id: 'analyze-retry', payload: { reason: 'test' } }]);
    await until(() => attempts.length === 2, 15_000);
    expect(attempts).toEqual([1, 2]);
    await until(async () => (await queue.counts()).analyze.completed === 1);
  });

  it('refuses a payload that does not match the catalog', async () => {
    queue = make();
    await expect(
      queue.enqueue('probe', [{ payload: { serverId: -1, url: 'nope', slot: 'x' } as never }]),
    ).rejects.toThrow();
  });
});

describe('bullmq queue without Redis', () => {
  it('fails fast when Redis is unreachable, and ping says false', async () => {
    const queue = new BullmqQueue({ redisUrl: 'redis://127.0.0.1:1', prefix: uniquePrefix() });
    try {
      expect(await queue.ping()).toBe(false);
      await expect(queue.enqueue('analyze', [{ payload: { reason: 'x' } }])).rejects.toThrow();
    } finally {
      await queue.close(100);
    }
  });
});
