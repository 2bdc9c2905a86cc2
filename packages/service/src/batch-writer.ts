/**
 * Collects items from many concurrent callers and writes them in batches: one write per
 * `maxBatch` items or per `maxDelayMs`, whichever comes first. Each caller's promise settles
 * when the batch holding its item is durable (or failed), so a job or a request is only
 * acknowledged once its data is stored. `writeBatch` may return one result per item (in
 * order), which is what that item's caller receives.
 */
export class BatchWriter<T, R = void> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    // may resolve to one result per item, or to nothing when callers need no result
    private readonly writeBatch: (items: T[]) => Promise<R[] | undefined | null | unknown>,
    private readonly options: {
      maxBatch: number;
      maxDelayMs: number;
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
      if (this.pending.length >= this.options.maxBatch) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  /** Writes what is pending now; resolves when every batch started so far has settled. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
  }

  private flush() {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const settle = (entries: typeof batch, results: unknown) => {
      const list = Array.isArray(results) ? (results as R[]) : null;
      for (const [i, p] of entries.entries()) p.resolve(list ? (list[i] as R) : (undefined as R));
    };
    const write = this.writeBatch(batch.map((p) => p.item)).then(
      (results) => settle(batch, results),
      async (err) => {
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
      },
    );
    this.inFlight.add(write);
    void write.finally(() => this.inFlight.delete(write));
  }
}
