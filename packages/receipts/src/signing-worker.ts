/**
 * Ed25519 signatures computed on a worker thread, many per message. An agent-query batch signs
 * up to hundreds of receipts while it holds the audit log's append lock; on the main thread
 * that is ~40 µs each of event-loop time no HTTP request gets. Here the main thread pays one
 * postMessage per batch, and the signing runs on the other core.
 *
 * The worker signs with libsodium (sodium-native) where it loads, else with node:crypto. Ed25519
 * signatures are deterministic (RFC 8032), so both give the same bytes for the same key and input
 * (tested); libsodium's took 18–22 µs a signature here against OpenSSL's 31–38, and every one of
 * them is made while the batch holds the append lock.
 *
 * The worker is plain JavaScript evaluated from a string (no loader, no file to resolve, so it
 * starts the same under tsx, vitest and a bundle), started on first use and unref'd. If it dies,
 * what it had in hand is refused (the batch fails, the callers get 503s) and the next call
 * starts a new one.
 */

import type { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** What signs many inputs at once off the main thread: a SigningWorker, or a SigningPool of them. */
export interface Signer {
  /** base64url Ed25519 signatures of each input (UTF-8), in order. */
  sign(key: KeyObject, inputs: readonly string[]): Promise<string[]>;
  /** Stops the thread(s); pending signatures are refused. */
  close(): Promise<void>;
}

/** Where sodium-native is, for the worker to load (null: not installed here, node:crypto signs). */
function resolveSodium(): string | null {
  try {
    return createRequire(import.meta.url).resolve('sodium-native');
  } catch {
    return null;
  }
}

export const SODIUM_NATIVE_PATH = resolveSodium();

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { sign } = require('node:crypto');
let sodium = null;
try {
  if (workerData.sodiumPath) sodium = require(workerData.sodiumPath);
} catch {
  sodium = null; // a platform without its prebuilt binary: node:crypto signs instead
}
let current = null;
let secretKey = null; // libsodium's form of the key: seed || public key
const signature = sodium ? Buffer.alloc(sodium.crypto_sign_BYTES) : null;
parentPort.on('message', ({ id, key, seed, inputs }) => {
  if (key) {
    current = key;
    secretKey = null;
    if (sodium && seed) {
      secretKey = sodium.sodium_malloc(sodium.crypto_sign_SECRETKEYBYTES);
      sodium.crypto_sign_seed_keypair(Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES), secretKey, Buffer.from(seed));
    }
  }
  try {
    const signatures = secretKey
      ? inputs.map((input) => {
          sodium.crypto_sign_detached(signature, Buffer.from(input), secretKey);
          return signature.toString('base64url');
        })
      : inputs.map((input) => sign(null, Buffer.from(input), current).toString('base64url'));
    parentPort.postMessage({ id, signatures, native: secretKey !== null });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

type Reply = { id: number; signatures?: string[]; native?: boolean; error?: string };

export class SigningWorker implements Signer {
  /**
   * @param source The worker's program (tests give one that crashes, to check that what was in
   * hand is refused and that the next call does not wait on a dead thread).
   * @param sodiumPath sodium-native for the worker to sign with; null signs with node:crypto.
   */
  constructor(
    private readonly source: string = WORKER_SOURCE,
    private readonly sodiumPath: string | null = SODIUM_NATIVE_PATH,
  ) {}

  /** Whether the last batch was signed by libsodium (null until one was signed). */
  native: boolean | null = null;

  #worker: Worker | null = null;
  /** The key the running worker holds: cloning a KeyObject into a message costs ~1 ms. */
  #workerKey: KeyObject | null = null;
  #nextId = 0;
  readonly #pending = new Map<number, { resolve: (s: string[]) => void; reject: (e: Error) => void }>();

  /** base64url Ed25519 signatures of each input (UTF-8), in order. */
  sign(key: KeyObject, inputs: readonly string[]): Promise<string[]> {
    if (inputs.length === 0) return Promise.resolve([]);
    const worker = this.#start();
    const id = this.#nextId++;
    return new Promise<string[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // the key goes along only when it changed (a rotation) or the worker is new; messages
      // are handled in order, so every later one is signed with it
      const send = key === this.#workerKey ? null : key;
      this.#workerKey = key;
      // libsodium takes the key as its 32-byte seed (the JWK's d); a key that is not a private
      // one goes to node:crypto, which refuses it
      const d = send?.type === 'private' && this.sodiumPath ? send.export({ format: 'jwk' }).d : undefined;
      const seed = d ? Buffer.from(d, 'base64url') : null;
      worker.postMessage({ id, key: send, seed, inputs });
    });
  }

  /** Stops the worker; pending signatures are refused. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    if (worker) await worker.terminate();
    this.#failAll(new Error('the signing worker was closed'));
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.source, {
      eval: true,
      execArgv: [],
      workerData: { sodiumPath: this.sodiumPath },
    });
    this.#workerKey = null;
    worker.unref();
    worker.on('message', ({ id, signatures, native, error }: Reply) => {
      const pending = this.#pending.get(id);
      if (!pending) return;
      this.#pending.delete(id);
      if (native !== undefined) this.native = native;
      if (signatures) pending.resolve(signatures);
      else pending.reject(new Error(`signing failed: ${error}`));
    });
    const gone = (err: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#failAll(err);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the signing worker exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #failAll(err: Error) {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}

/** Below this many inputs per thread, a batch is signed by one worker (a message costs ~50 µs). */
const MIN_INPUTS_PER_THREAD = 8;

/**
 * A batch's signatures split over several SigningWorkers, signed at once. An agent-query batch
 * is signed while it holds the audit log's append lock, and every other batch waits on that
 * lock: two threads shorten that wait (measured on 2 cores: /agent-query +7–17 % req/s in A/B
 * runs). Batches too small to be worth a second message go to the first worker alone.
 */
export class SigningPool implements Signer {
  readonly #workers: SigningWorker[];

  constructor(threads = Math.min(2, availableParallelism()), source?: string) {
    this.#workers = Array.from({ length: Math.max(1, threads) }, () => new SigningWorker(source));
  }

  async sign(key: KeyObject, inputs: readonly string[]): Promise<string[]> {
    const parts = Math.min(this.#workers.length, Math.floor(inputs.length / MIN_INPUTS_PER_THREAD));
    if (parts <= 1) return this.#workers[0]!.sign(key, inputs);
    const size = Math.ceil(inputs.length / parts);
    // a batch fails once every part has settled: no part is still being signed when the caller
    // hears of the failure (and may retry)
    const signed = await Promise.allSettled(
      this.#workers.slice(0, parts).map((w, i) => w.sign(key, inputs.slice(i * size, (i + 1) * size))),
    );
    const failed = signed.find((part) => part.status === 'rejected');
    if (failed) throw failed.reason;
    return signed.flatMap((part) => (part.status === 'fulfilled' ? part.value : []));
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.close()));
  }
}
