/**
 * A value that is expensive to read and fine to be `ttlMs` old: read once, shared by every
 * caller until it is older than that; then the first caller starts one new read, and callers
 * meanwhile get the value they would have had a moment ago instead of waiting (or, when there
 * is none yet, wait for that read). A failed read is not kept: the next caller tries again.
 */
export function cachedFor<T>(ttlMs: number, read: () => Promise<T>) {
  let value: { v: T } | null = null;
  let readAt = 0;
  let reading: Promise<T> | null = null;
  return {
    get(): Promise<T> {
      if (value && Date.now() - readAt < ttlMs) return Promise.resolve(value.v);
      reading ??= read()
        .then((v) => {
          value = { v };
          readAt = Date.now();
          return v;
        })
        .finally(() => {
          reading = null;
        });
      return value ? Promise.resolve(value.v) : reading;
    },
  };
}
