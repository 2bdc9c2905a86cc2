/**
 * npm run bench:receipts
 *
 * Receipt signing throughput on one thread — jose's CompactSign (baseline) beside the KeyRing's
 * node:crypto path, and the signing worker (batches of 50, as /agent-query signs) with libsodium
 * beside node:crypto — verification throughput, and Merkle audit log costs on a 1,000,000-leaf log
 * in MemoryNodeStore: build, inclusion and consistency proofs (generation and verification), and
 * the streaming recomputation behind the audit check.
 *
 * Rates are per wall-second of a sequential loop and per CPU-second of the whole process
 * (process.cpuUsage counts every thread, so jose's WebCrypto work on the libuv pool is charged
 * too). Targets: ≥ 5,000 signs/s per core; a proof on a 1M-leaf log ≤ 5 ms.
 * Writes bench-results/receipts.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type Checkpoint,
  loadSigningKeys,
  MemoryKeyStore,
  MemoryNodeStore,
  MerkleLog,
  newReceiptId,
  RECEIPT_TYP,
  type ReceiptInput,
  recomputeRoot,
  SigningWorker,
  SODIUM_NATIVE_PATH,
  signReceipt,
  signReceipts,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
} from '@observatory/receipts';
import { CompactSign, importJWK } from 'jose';

const SIGN_SECONDS = 2.5;
const VERIFY_SECONDS = 2;
const LOG_SIZE = 1_000_000;
const APPEND_BATCH = 10_000;
const PROOFS = 1_000;
const TARGET_SIGNS_PER_CORE = 5_000;
const TARGET_PROOF_MS = 5;

const input: ReceiptInput = {
  iss: 'https://observatory.example',
  sub: 'https://mcp.weather.example/mcp',
  verdict: 'PASS',
  score: 87.5,
  latency: { p50_ms: 120, p95_ms: 340 },
  evidence: {
    window: { from: '2026-05-01T00:00:00Z', to: '2026-05-31T00:00:00Z' },
    probes: 8640,
    reports: 12,
  },
};

interface Rate {
  ops: number;
  per_wall_s: number;
  per_cpu_s: number;
}

/** Runs `op` back to back (awaiting each) for about `seconds`. */
async function rate(seconds: number, op: () => unknown): Promise<Rate> {
  for (let i = 0; i < 200; i++) await op(); // warm-up
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let ops = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) await op();
    ops += 100;
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { ops, per_wall_s: ops / wall, per_cpu_s: ops / ((cpu.user + cpu.system) / 1e6) };
}

/** Same, for a synchronous op: no await per iteration, as a caller of signReceipt would run it. */
function rateSync(seconds: number, op: () => unknown): Rate {
  for (let i = 0; i < 200; i++) op();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let ops = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) op();
    ops += 100;
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { ops, per_wall_s: ops / wall, per_cpu_s: ops / ((cpu.user + cpu.system) / 1e6) };
}

interface Timing {
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

function summarize(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    mean_ms: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    max_ms: sorted.at(-1)!,
  };
}

async function timeEach(count: number, op: (i: number) => Promise<unknown> | unknown): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await op(i);
    samples.push(performance.now() - t0);
  }
  return summarize(samples);
}

/** Deterministic pseudo-random integers, so runs compare. */
function lcg(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * below);
  };
}

const started = performance.now();

// --- signing and verification -------------------------------------------------------------------
const store = new MemoryKeyStore();
const ring = await loadSigningKeys({ store });
const [stored] = await store.list();
const joseKey = await importJWK(stored!.private_jwk, 'EdDSA');
const encoder = new TextEncoder();

const joseSign = await rate(SIGN_SECONDS, () => {
  // The same receipt, built the same way, signed through jose.
  const claims = { rid: newReceiptId(), iat: Math.floor(Date.now() / 1000), ...input };
  return new CompactSign(encoder.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'EdDSA', kid: ring.kid, typ: RECEIPT_TYP })
    .sign(joseKey);
});
const fastSign = rateSync(SIGN_SECONDS, () => signReceipt(ring, input));

/**
 * Receipts signed as /agent-query signs them: batches of 50 on one signing thread, with libsodium
 * (where it loads) and with node:crypto; rates are per receipt.
 */
async function workerRate(sodiumPath: string | null): Promise<Rate & { native: boolean | null }> {
  const worker = new SigningWorker(undefined, sodiumPath);
  const batch = Array.from({ length: 50 }, () => input);
  try {
    const r = await rate(SIGN_SECONDS, () => signReceipts(ring, batch, worker));
    return {
      ops: r.ops * 50,
      per_wall_s: r.per_wall_s * 50,
      per_cpu_s: r.per_cpu_s * 50,
      native: worker.native,
    };
  } finally {
    await worker.close();
  }
}
const workerNodeCrypto = await workerRate(null);
const workerSodium = await workerRate(SODIUM_NATIVE_PATH);

const sample = signReceipt(ring, input).jws;
const jwks = ring.jwks();
const verify = await rate(VERIFY_SECONDS, async () => {
  if (!(await verifyReceipt(sample, jwks)).valid) throw new Error('a valid receipt did not verify');
});

// --- Merkle log ---------------------------------------------------------------------------------
const leafData = (i: number) => `{"seq":${i},"kind":"trust_query","server":"s${i % 997}"}`;
const log = new MerkleLog(new MemoryNodeStore());
const buildStart = performance.now();
for (let i = 0; i < LOG_SIZE; i += APPEND_BATCH) {
  await log.appendData(
    Array.from({ length: Math.min(APPEND_BATCH, LOG_SIZE - i) }, (_, j) => leafData(i + j)),
  );
}
const buildMs = performance.now() - buildStart;

const rootStart = performance.now();
const root = await log.root();
const rootMs = performance.now() - rootStart;
const checkpoint: Checkpoint = {
  log_id: 'bench',
  tree_size: LOG_SIZE,
  root_hash: root,
  issued_at: new Date().toISOString(),
};

const random = lcg(6962);
const indexes = Array.from({ length: PROOFS }, () => random(LOG_SIZE));
const oldSizes = Array.from({ length: PROOFS }, () => 1 + random(LOG_SIZE - 1));

const inclusionProofs: string[][] = [];
const inclusionGen = await timeEach(PROOFS, async (i) => {
  inclusionProofs.push(await log.inclusionProof(indexes[i]!, LOG_SIZE));
});
const inclusionVerify = await timeEach(PROOFS, (i) => {
  const check = verifyInclusion(
    { data: leafData(indexes[i]!) },
    indexes[i]!,
    inclusionProofs[i]!,
    checkpoint,
  );
  if (!check.valid) throw new Error(`inclusion proof for ${indexes[i]} failed: ${check.reason}`);
});

const oldCheckpoints: Checkpoint[] = [];
for (const size of oldSizes)
  oldCheckpoints.push({ ...checkpoint, tree_size: size, root_hash: await log.root(size) });
const consistencyProofs: string[][] = [];
const consistencyGen = await timeEach(PROOFS, async (i) => {
  consistencyProofs.push(await log.consistencyProof(oldSizes[i]!, LOG_SIZE));
});
const consistencyVerify = await timeEach(PROOFS, (i) => {
  const check = verifyConsistency(oldCheckpoints[i]!, checkpoint, consistencyProofs[i]!);
  if (!check.valid) throw new Error(`consistency proof from ${oldSizes[i]} failed: ${check.reason}`);
});

const recomputeStart = performance.now();
const recomputed = await recomputeRoot(
  (function* () {
    for (let i = 0; i < LOG_SIZE; i += APPEND_BATCH) {
      yield Array.from({ length: Math.min(APPEND_BATCH, LOG_SIZE - i) }, (_, j) => leafData(i + j));
    }
  })(),
);
const recomputeMs = performance.now() - recomputeStart;
if (recomputed.root_hash !== root) throw new Error('streaming recomputation disagrees with the log root');

// --- report -------------------------------------------------------------------------------------
const ratio = fastSign.per_cpu_s / joseSign.per_cpu_s;
const worstProofP99 = Math.max(inclusionGen.p99_ms, consistencyGen.p99_ms);
const results = {
  benchmark: 'receipts',
  generated_at: new Date().toISOString(),
  machine: { node: process.version, cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length },
  signing: {
    jose_compact_sign: joseSign,
    keyring_node_crypto: fastSign,
    ratio_per_cpu_s: ratio,
    signing_worker_batches_of_50: { node_crypto: workerNodeCrypto, libsodium: workerSodium },
    libsodium_over_node_crypto_per_cpu_s: workerSodium.per_cpu_s / workerNodeCrypto.per_cpu_s,
    receipt_bytes: sample.length,
  },
  verification: { verify_receipt_jose: verify },
  merkle: {
    leaves: LOG_SIZE,
    append_batch: APPEND_BATCH,
    build_ms: buildMs,
    build_leaves_per_s: LOG_SIZE / (buildMs / 1000),
    root_ms: rootMs,
    proofs_sampled: PROOFS,
    inclusion_proof: inclusionGen,
    inclusion_verify: inclusionVerify,
    inclusion_path_length: inclusionProofs[0]!.length,
    consistency_proof: consistencyGen,
    consistency_verify: consistencyVerify,
    recompute_root_ms: recomputeMs,
  },
  targets: {
    signs_per_cpu_s: TARGET_SIGNS_PER_CORE,
    proof_p99_ms: TARGET_PROOF_MS,
    signing_met: fastSign.per_cpu_s >= TARGET_SIGNS_PER_CORE,
    proof_met: worstProofP99 <= TARGET_PROOF_MS,
  },
  total_seconds: (performance.now() - started) / 1000,
};

const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
const ms = (x: number) => `${x.toFixed(3)} ms`;
const rows: Array<[string, string, string]> = [
  [
    'sign: jose CompactSign (baseline)',
    `${n0(joseSign.per_wall_s)}/s wall`,
    `${n0(joseSign.per_cpu_s)}/CPU-s`,
  ],
  ['sign: KeyRing node:crypto', `${n0(fastSign.per_wall_s)}/s wall`, `${n0(fastSign.per_cpu_s)}/CPU-s`],
  ['sign: ratio (per CPU-s)', `${ratio.toFixed(2)}×`, `target ≥ ${n0(TARGET_SIGNS_PER_CORE)}/CPU-s`],
  [
    'sign: worker, batches of 50, node:crypto',
    `${n0(workerNodeCrypto.per_wall_s)}/s wall`,
    `${n0(workerNodeCrypto.per_cpu_s)}/CPU-s`,
  ],
  [
    `sign: worker, batches of 50, libsodium${workerSodium.native ? '' : ' (did not load)'}`,
    `${n0(workerSodium.per_wall_s)}/s wall`,
    `${n0(workerSodium.per_cpu_s)}/CPU-s (${(workerSodium.per_cpu_s / workerNodeCrypto.per_cpu_s).toFixed(2)}×)`,
  ],
  ['verifyReceipt (jose)', `${n0(verify.per_wall_s)}/s wall`, `${n0(verify.per_cpu_s)}/CPU-s`],
  [
    'merkle build 1M leaves',
    `${(buildMs / 1000).toFixed(2)} s`,
    `${n0(results.merkle.build_leaves_per_s)} leaves/s`,
  ],
  ['merkle root (1M)', ms(rootMs), ''],
  ['inclusion proof (1M)', `mean ${ms(inclusionGen.mean_ms)}`, `p99 ${ms(inclusionGen.p99_ms)}`],
  ['inclusion verify', `mean ${ms(inclusionVerify.mean_ms)}`, `p99 ${ms(inclusionVerify.p99_ms)}`],
  ['consistency proof (1M)', `mean ${ms(consistencyGen.mean_ms)}`, `p99 ${ms(consistencyGen.p99_ms)}`],
  ['consistency verify', `mean ${ms(consistencyVerify.mean_ms)}`, `p99 ${ms(consistencyVerify.p99_ms)}`],
  ['audit recompute (1M, streaming)', `${(recomputeMs / 1000).toFixed(2)} s`, ''],
];
const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
console.log(`\nreceipts benchmark — ${results.machine.cpu}, node ${process.version}\n`);
for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join('  │  '));
console.log(
  `\ntargets: signing ${results.targets.signing_met ? 'MET' : 'MISSED'} (≥ ${TARGET_SIGNS_PER_CORE}/CPU-s), ` +
    `proofs ${results.targets.proof_met ? 'MET' : 'MISSED'} (p99 ≤ ${TARGET_PROOF_MS} ms) — ${results.total_seconds.toFixed(1)} s total`,
);

const out = path.join(process.cwd(), 'bench-results', 'receipts.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), out)}`);
