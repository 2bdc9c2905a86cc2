/**
 * KeyStore in one JSON file under DATA_DIR, for the embedded (single machine) mode.
 *
 * The file holds private keys, so it is created with mode 0600 in a 0700 directory. Every write
 * goes to a fresh temporary file that is fsynced and renamed over the old one: a reader sees the
 * old file or the new one, never half of either. Writers (insert, retire) take a lock file
 * around read-modify-write so two processes sharing DATA_DIR cannot lose each other's keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyStore, PublicSigningJwk, StoredSigningKey } from './key-store.ts';

export const KEY_FILE_NAME = 'signing-keys.json';

/** A lock older than this is taken to be left behind by a crashed process. */
const STALE_LOCK_MS = 10_000;
const LOCK_TIMEOUT_MS = 15_000;

interface KeyFile {
  version: 1;
  keys: Array<
    Omit<StoredSigningKey, 'created_at' | 'retired_at'> & { created_at: string; retired_at: string | null }
  >;
}

export class FileKeyStore implements KeyStore {
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = path.join(dir, KEY_FILE_NAME);
  }

  async list(): Promise<StoredSigningKey[]> {
    return (await this.#read()).keys.map((key) => ({
      ...key,
      public_jwk: key.public_jwk as PublicSigningJwk,
      created_at: new Date(key.created_at),
      retired_at: key.retired_at === null ? null : new Date(key.retired_at),
    }));
  }

  async insert(key: StoredSigningKey): Promise<void> {
    await this.#update((file) => {
      if (file.keys.some((k) => k.kid === key.kid)) return false;
      file.keys.push({
        ...key,
        created_at: key.created_at.toISOString(),
        retired_at: key.retired_at?.toISOString() ?? null,
      });
      return true;
    });
  }

  async retire(kid: string, at: Date): Promise<void> {
    await this.#update((file) => {
      const key = file.keys.find((k) => k.kid === kid);
      if (!key || key.retired_at !== null) return false;
      key.retired_at = at.toISOString();
      return true;
    });
  }

  async #read(): Promise<KeyFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: [] };
      throw error;
    }
    const parsed = JSON.parse(text) as KeyFile;
    if (parsed?.version !== 1 || !Array.isArray(parsed.keys)) {
      throw new Error(`${this.file} is not a signing key file (version 1)`);
    }
    return parsed;
  }

  /** Read-modify-write under the lock; `change` returns false when there is nothing to write. */
  async #update(change: (file: KeyFile) => boolean): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.#withLock(async () => {
      const file = await this.#read();
      if (change(file)) await this.#writeAtomically(`${JSON.stringify(file, null, 2)}\n`);
    });
  }

  async #writeAtomically(text: string): Promise<void> {
    const temp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, this.file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async #withLock<T>(fn: () => Promise<T>): Promise<T> {
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    for (;;) {
      try {
        await (await open(lock, 'wx', 0o600)).close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0, // vanished between open and stat: just retry
        );
        if (age > STALE_LOCK_MS) await rm(lock, { force: true });
        else if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
        else await sleep(5 + Math.random() * 20);
      }
    }
    try {
      return await fn();
    } finally {
      await rm(lock, { force: true });
    }
  }
}
