import { signingKeysRepository } from '@observatory/db';
import { FileKeyStore, type KeyRing, type KeyStore, loadSigningKeys } from '@observatory/receipts';
import type { Runtime } from '../runtime.ts';

/**
 * Where receipt signing keys live: a 0600 file under DATA_DIR in embedded mode (one process),
 * Postgres in distributed mode (every API replica signs with the same key).
 */
export function keyStoreFor(runtime: Runtime): KeyStore {
  return runtime.db.mode === 'embedded'
    ? new FileKeyStore(runtime.config.dataDir)
    : signingKeysRepository(runtime.db.sql);
}

/**
 * Loads the signing keys (RECEIPT_SIGNING_JWK, else the stored active key, else a new one) and
 * re-reads the store every minute, so a rotation done by `observatory keys rotate` reaches
 * every replica without a restart.
 */
export async function openKeyRing(runtime: Runtime, refreshMs = 60_000): Promise<KeyRing> {
  const ring = await loadSigningKeys({
    store: keyStoreFor(runtime),
    envJwk: runtime.config.RECEIPT_SIGNING_JWK,
  });
  const timer = setInterval(() => {
    ring.refresh().catch((err: unknown) => runtime.logger.warn({ err }, 'could not refresh signing keys'));
  }, refreshMs);
  timer.unref();
  runtime.beforeDatabaseClose(async () => clearInterval(timer));
  return ring;
}
