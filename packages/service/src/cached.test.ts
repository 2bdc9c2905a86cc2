import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cachedFor } from './cached.ts';

describe('cachedFor', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A read that counts its calls and resolves when told to. */
  function reads() {
    const pending: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
    const read = vi.fn(
      () =>
        new Promise<number>((resolve, reject) => {
          pending.push({ resolve, reject });
        }),
    );
    return { read, pending };
  }

  it('shares one read among callers, and its value until it is ttl old', async () => {
    const { read, pending } = reads();
    const cache = cachedFor(5_000, read);
    const first = [cache.get(), cache.get(), cache.get()];
    expect(read).toHaveBeenCalledTimes(1);
    pending[0]!.resolve(1);
    expect(await Promise.all(first)).toEqual([1, 1, 1]);

    vi.advanceTimersByTime(4_999);
    expect(await cache.get()).toBe(1);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('once stale, starts one new read and answers with the old value meanwhile', async () => {
    const { read, pending } = reads();
    const cache = cachedFor(5_000, read);
    const first = cache.get();
    pending[0]!.resolve(1);
    await first;

    vi.advanceTimersByTime(5_000);
    expect(await Promise.all([cache.get(), cache.get()])).toEqual([1, 1]);
    expect(read).toHaveBeenCalledTimes(2);
    pending[1]!.resolve(2);
    await vi.waitFor(async () => expect(await cache.get()).toBe(2));
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('keeps no failed read: the caller hears of it, and the next one reads again', async () => {
    const { read, pending } = reads();
    const cache = cachedFor(5_000, read);
    const failing = cache.get();
    pending[0]!.reject(new Error('database away'));
    await expect(failing).rejects.toThrow('database away');

    const again = cache.get();
    expect(read).toHaveBeenCalledTimes(2);
    pending[1]!.resolve(3);
    expect(await again).toBe(3);
  });
});
