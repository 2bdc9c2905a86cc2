import { HttpProblem, problems } from './problem.ts';

/**
 * What a caller of a failed batch is told. Errors with a code (Postgres SQLSTATEs, driver
 * connection errors) go on as they are: the API maps those to 503 (or, for a bug, 500). A
 * failure without one — a worker thread gone, a transaction the server ended by itself — is
 * turned into a 503 problem: a batch that failed is never acknowledged, and the request may be
 * retried.
 */
export function refusalOf(err: unknown, detail: string): unknown {
  if (err instanceof HttpProblem) return err;
  if (typeof (err as { code?: unknown } | null)?.code === 'string') return err;
  return Object.assign(problems.unavailable(detail), { cause: err });
}

/**
 * Collects items from many concurrent callers and writes them in batches (group commit):
 * when no write is under way, what has arrived is written at once (after the current tick,
 * so simultaneous callers share it); while a write is under way, items gather and go in the
 * next batch the moment it ends. Light load gets low latency, heavy load gets big batches.
 * Each caller's promise settles when the batch holding its item is durable (or failed), so a
 * job or a request is only acknowledged once its data is stored. `writeBatch` may return one
 * result per item (in order), which is what that item's caller receives.
 */
export class BatchWriter<T, R = void> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }> = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    // may resolve to one result per item, or to nothing when callers need no result
    private readonly writeBatch: (items: T[]) => Promise<R[] | undefined | null | unknown>,
    private readonly options: {
      maxBatch: number;
      /** Writes allowed at once (1 where writes serialise on a lock anyway). */
      maxConcurrent?: number;
      /**
       * When a batch fails with an error this says is about one item's data (not the
       * database being away), write the items one by one, so one bad item fails alone.
       */
      isolateOnError?: (err: unknown) => boolean;
    },
  ) {}

  /** Items waiting for their batch (for metrics). */
  get depth(): number {
    return this.pending.length;
  }

  write(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Writes what is pending now; resolves when every batch started so far has settled. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight.size > 0) {
      this.flush(true);
      await Promise.allSettled([...this.inFlight]);
    }
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush(false);
    });
  }

  private flush(force: boolean) {
    const maxConcurrent = this.options.maxConcurrent ?? 1;
    while (this.pending.length > 0 && (force || this.inFlight.size < maxConcurrent)) {
      const batch = this.pending.splice(0, this.options.maxBatch);
      const write = this.run(batch);
      this.inFlight.add(write);
      void write.finally(() => {
        this.inFlight.delete(write);
        // whatever gathered meanwhile goes now
        if (this.pending.length > 0) this.schedule();
      });
      if (force) break;
    }
  }

  private async run(batch: typeof this.pending) {
    const settle = (entries: typeof batch, results: unknown) => {
      const list = Array.isArray(results) ? (results as R[]) : null;
      for (const [i, p] of entries.entries()) p.resolve(list ? (list[i] as R) : (undefined as R));
    };
    try {
      settle(batch, await this.writeBatch(batch.map((p) => p.item)));
    } catch (err) {
      if (batch.length > 1 && this.options.isolateOnError?.(err)) {
        for (const p of batch) {
          await this.writeBatch([p.item]).then(
            (results) => settle([p], results),
            (itemErr) => p.reject(itemErr),
          );
        }
        return;
      }
      for (const p of batch) p.reject(err);
    }
  }
}
