import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverResolver } from '../src/servers/server-resolver.ts';
import { createTestRuntime, type TestRuntime } from '../src/testing.ts';

/** resolveOrCreate remembers the raw URLs it resolved to servers that already existed. */
describe('server resolver', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('creates a server once, then resolves each spelling of its URL to it, remembering them', async () => {
    const resolver = serverResolver(runtime);
    const first = await resolver.resolveOrCreate('http://127.0.0.1:9/resolved');
    expect(first).toMatchObject({ url: 'http://127.0.0.1:9/resolved', created: true });
    // the creating answer is not remembered: the next one says created: false
    expect(resolver.rememberedRawUrls).toBe(0);
    const again = await resolver.resolveOrCreate('http://127.0.0.1:9/resolved');
    expect(again).toEqual({ id: first.id, url: first.url, created: false });
    expect(await resolver.resolveOrCreate('http://127.0.0.1:9/resolved')).toBe(again);
    const other = await resolver.resolveOrCreate('HTTP://127.0.0.1:9/resolved');
    expect(other).toEqual({ id: first.id, url: first.url, created: false });
    expect(resolver.rememberedRawUrls).toBe(2);

    // another resolver (another api process) finds it in the database, and remembers that too
    const elsewhere = serverResolver(runtime);
    expect(await elsewhere.resolveOrCreate('http://127.0.0.1:9/resolved')).toEqual(again);
    expect(elsewhere.rememberedRawUrls).toBe(1);
  });

  it('never remembers a refusal: the same URL is refused again, the same way', async () => {
    const resolver = serverResolver(runtime);
    for (const url of ['not a url', 'not a url', 'ftp://127.0.0.1:9/x', 'ftp://127.0.0.1:9/x']) {
      await expect(resolver.resolveOrCreate(url)).rejects.toMatchObject({ status: 400 });
    }
    expect(resolver.rememberedRawUrls).toBe(0);
  });

  it('keeps at most its limit of raw URLs, each still resolving right once forgotten', async () => {
    const resolver = serverResolver(runtime, { rawUrlLimit: 2 });
    const urls = Array.from({ length: 4 }, (_, i) => `http://127.0.0.1:9/bounded-${i}`);
    const ids = [];
    for (const url of urls) ids.push((await resolver.resolveOrCreate(url)).id);
    for (const url of urls) await resolver.resolveOrCreate(url);
    expect(resolver.rememberedRawUrls).toBe(2);
    for (const [i, url] of urls.entries()) {
      expect(await resolver.resolveOrCreate(url)).toEqual({ id: ids[i], url, created: false });
    }
    expect(resolver.rememberedRawUrls).toBe(2);
  });
});
