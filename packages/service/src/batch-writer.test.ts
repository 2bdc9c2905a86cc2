import { describe, expect, it } from 'vitest';
import { BatchWriter, refusalOf } from './batch-writer.ts';
import { HttpProblem } from './problem.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('BatchWriter (group commit)', () => {
  it('writes callers of the same tick together and gives each its own result', async () => {
    const batches: number[][] = [];
    const writer = new BatchWriter<number, string>(
      async (items) => {
        batches.push(items);
        return items.map((i) => `stored-${i}`);
      },
      { maxBatch: 4 },
    );
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => writer.write(i)));
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => `stored-${i}`));
    expect(batches.map((b) => b.length)).toEqual([4, 4, 2]);
  });

  it('gathers what arrives during a write into the next batch', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const writer = new BatchWriter<number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((r) => (release = r));
      },
      { maxBatch: 100, maxConcurrent: 1 },
    );
    const first = writer.write(1);
    await tick();
    const later = [2, 3, 4, 5].map((n) => writer.write(n));
    await tick();
    expect(batches).toEqual([[1]]); // the first write is still under way
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
  });

  it('rejects every caller of a failed batch, and later batches still go through', async () => {
    let fail = true;
    const writer = new BatchWriter<number>(
      async () => {
        if (fail) throw new Error('database away');
      },
      { maxBatch: 3 },
    );
    const first = await Promise.allSettled([writer.write(1), writer.write(2)]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(writer.write(3)).resolves.toBeUndefined();
  });

  it('isolates a bad item when the error is about data, so the rest of its batch is stored', async () => {
    const stored: number[] = [];
    const writer = new BatchWriter<number>(
      async (items) => {
        if (items.includes(13)) throw Object.assign(new Error('invalid input'), { code: '22P02' });
        stored.push(...items);
      },
      { maxBatch: 5, isolateOnError: (err) => (err as { code?: string }).code?.startsWith('22') ?? false },
    );
    const results = await Promise.allSettled([11, 12, 13, 14, 15].map((n) => writer.write(n)));
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(stored.sort()).toEqual([11, 12, 14, 15]);
  });

  it('drain() writes what is pending and waits for it', async () => {
    const written: number[] = [];
    const writer = new BatchWriter<number>(
      async (items) => {
        written.push(...items);
      },
      { maxBatch: 100 },
    );
    const pending = writer.write(7);
    expect(writer.depth).toBe(1);
    await writer.drain();
    await pending;
    expect(written).toEqual([7]);
    expect(writer.depth).toBe(0);
  });
});

describe('refusalOf (what the caller of a failed batch gets)', () => {
  it('turns a failure without a code into a 503 problem, and leaves coded errors to the API', () => {
    const refused = refusalOf(new Error('the signing worker exited (1)'), 'Retry shortly.');
    expect(refused).toBeInstanceOf(HttpProblem);
    expect(refused).toMatchObject({ status: 503, detail: 'Retry shortly.' });
    const postgres = Object.assign(new Error('terminating connection'), { code: '57P01' });
    expect(refusalOf(postgres, 'x')).toBe(postgres);
    const problem = new HttpProblem(402, 'Payment Required', 'used up');
    expect(refusalOf(problem, 'x')).toBe(problem);
  });
});
