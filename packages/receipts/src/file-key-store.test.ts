import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileKeyStore, KEY_FILE_NAME } from './file-key-store.ts';
import { generateSigningKey, loadSigningKeys } from './keys.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'receipts-keys-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('FileKeyStore', () => {
  it('creates its directory and a 0600 file, and persists across instances', async () => {
    const dir = path.join(root, 'data', 'nested');
    const ring = await loadSigningKeys({ store: new FileKeyStore(dir) });
    expect((await stat(path.join(dir, KEY_FILE_NAME))).mode & 0o777).toBe(0o600);

    const reopened = new FileKeyStore(dir);
    const [key] = await reopened.list();
    expect(key?.kid).toBe(ring.kid);
    expect(key?.created_at).toBeInstanceOf(Date);
    expect(key?.retired_at).toBeNull();
    expect((await loadSigningKeys({ store: reopened })).kid).toBe(ring.kid);
  });

  it('round-trips retirement dates and ignores a second insert of a kid', async () => {
    const store = new FileKeyStore(root);
    const key = await generateSigningKey(new Date('2026-05-01T10:00:00.000Z'));
    await store.insert(key);
    await store.insert({ ...key, created_at: new Date(0) });
    await store.retire(key.kid, new Date('2026-05-02T10:00:00.000Z'));
    await store.retire(key.kid, new Date('2030-01-01T00:00:00.000Z')); // already retired: unchanged
    expect(await new FileKeyStore(root).list()).toEqual([
      { ...key, retired_at: new Date('2026-05-02T10:00:00.000Z') },
    ]);
  });

  it('loses no key when instances write at the same time, and leaves no temp files', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => generateSigningKey()));
    await Promise.all(keys.map((key) => new FileKeyStore(root).insert(key)));
    const stored = await new FileKeyStore(root).list();
    expect(new Set(stored.map((k) => k.kid))).toEqual(new Set(keys.map((k) => k.kid)));
    expect(await readdir(root)).toEqual([KEY_FILE_NAME]);
  });

  it('lists nothing before the first write', async () => {
    expect(await new FileKeyStore(path.join(root, 'absent')).list()).toEqual([]);
  });
});
