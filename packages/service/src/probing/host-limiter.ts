/**
 * At most `perHost` tasks at once per host, so a large fleet on one provider is never probed
 * in a burst. Waiters are served in arrival order.
 */
export class HostLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly perHost: number) {}

  async run<T>(host: string, task: () => Promise<T>): Promise<T> {
    await this.acquire(host);
    try {
      return await task();
    } finally {
      this.release(host);
    }
  }

  private acquire(host: string): Promise<void> {
    const n = this.active.get(host) ?? 0;
    if (n < this.perHost) {
      this.active.set(host, n + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(host) ?? [];
      queue.push(resolve);
      this.waiting.set(host, queue);
    });
  }

  private release(host: string) {
    const queue = this.waiting.get(host);
    const next = queue?.shift();
    if (next) {
      // hand the slot straight to the next waiter; the active count stays the same
      if (queue!.length === 0) this.waiting.delete(host);
      next();
      return;
    }
    const n = (this.active.get(host) ?? 1) - 1;
    if (n <= 0) this.active.delete(host);
    else this.active.set(host, n);
  }
}
