import { readFile } from 'node:fs/promises';
import { loadConfigOrExit } from '@observatory/config';
import { CATEGORIES, isCategory, normalizeCategory } from '@observatory/core';
import {
  createLogger,
  HttpProblem,
  openRuntime,
  type Runtime,
  registerSchema,
  serverResolver,
} from '@observatory/service';
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import {
  type Candidate,
  candidateFrom,
  type ParsedEntry,
  parseRegistryDocument,
  RegistryFormatError,
} from './registry-format.ts';

export interface ImportOutcome {
  /** The registry name (or a position for entries without one). */
  label: string;
  status: 'added' | 'updated' | 'skipped';
  reason?: string;
  url?: string;
  slug?: string;
}

export interface ImportOptions {
  /** Category given to imported servers (the registry has none). */
  category?: string;
  /** Called after each entry is settled (progress bar). */
  onProgress?: (done: number, total: number) => void;
  /** How many address checks (DNS lookups) run at once. */
  concurrency?: number;
}

const REASONS: Record<string, string> = {
  private_address: 'private or reserved address',
  dns_failed: 'DNS lookup failed',
  invalid_url: 'invalid URL',
  scheme_not_allowed: 'not an http(s) URL',
};

/** Keeps one entry per registry name: the one marked latest, else the last listed. */
function latestVersions(entries: ParsedEntry[]): { keep: ParsedEntry[]; older: ImportOutcome[] } {
  const chosen = new Map<string, number>();
  entries.forEach((e, i) => {
    if (!e.ok) return;
    const prev = chosen.get(e.server.name);
    if (
      prev === undefined ||
      e.server.isLatest === true ||
      (entries[prev] as { server: { isLatest: boolean | null } }).server.isLatest !== true
    ) {
      chosen.set(e.server.name, i);
    }
  });
  const keep: ParsedEntry[] = [];
  const older: ImportOutcome[] = [];
  entries.forEach((e, i) => {
    if (e.ok && chosen.get(e.server.name) !== i) {
      older.push({ label: e.server.name, status: 'skipped', reason: 'older version of the same server' });
    } else keep.push(e);
  });
  return { keep, older };
}

/**
 * Adds registry servers to the observatory as source 'imported', after the same checks a
 * registration gets (normalized URL, public http(s) address, valid details). Servers an owner
 * registered keep their own details. Each server is new, updated, or skipped with a reason.
 */
export async function importRegistryEntries(
  runtime: Runtime,
  entries: ParsedEntry[],
  options: ImportOptions = {},
): Promise<ImportOutcome[]> {
  const resolver = serverResolver(runtime);
  const ownOrigin = new URL(runtime.config.publicBaseUrl).origin;
  const category = normalizeCategory(options.category);
  const { keep, older } = latestVersions(entries);
  const outcomes: ImportOutcome[] = [...older];
  const total = entries.length;
  let done = older.length;
  const settle = (outcome: ImportOutcome) => {
    outcomes.push(outcome);
    done += 1;
    options.onProgress?.(done, total);
  };
  options.onProgress?.(done, total);

  // cheap checks first, in order, so "duplicate" always names the first occurrence
  const seen = new Map<string, string>();
  const toCheck: Array<{ label: string; url: string; candidate: Extract<Candidate, { ok: true }> }> = [];
  for (const entry of keep) {
    if (!entry.ok) {
      settle({ label: entry.label, status: 'skipped', reason: entry.reason });
      continue;
    }
    const label = entry.server.name;
    const candidate = candidateFrom(entry.server);
    if (!candidate.ok) {
      settle({ label, status: 'skipped', reason: candidate.reason });
      continue;
    }
    let url: string;
    try {
      url = resolver.normalize(candidate.url);
    } catch {
      settle({ label, status: 'skipped', reason: 'invalid URL' });
      continue;
    }
    if (new URL(url).origin === ownOrigin) {
      settle({ label, status: 'skipped', reason: 'the observatory itself', url });
      continue;
    }
    const first = seen.get(url);
    if (first) {
      settle({ label, status: 'skipped', reason: `duplicate of ${first}`, url });
      continue;
    }
    seen.set(url, label);
    toCheck.push({ label, url, candidate });
  }

  // address checks resolve DNS: a few at a time, then the writes
  let next = 0;
  const worker = async () => {
    while (next < toCheck.length) {
      const item = toCheck[next++]!;
      settle(await importOne(runtime, resolver, item, category));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
  return outcomes;
}

async function importOne(
  runtime: Runtime,
  resolver: ReturnType<typeof serverResolver>,
  item: { label: string; url: string; candidate: Extract<Candidate, { ok: true }> },
  category: string,
): Promise<ImportOutcome> {
  const { label, url, candidate } = item;
  try {
    await resolver.assertProbeable(url);
  } catch (err) {
    if (!(err instanceof HttpProblem)) throw err;
    const code = String(err.extra.reason_code ?? '');
    return { label, status: 'skipped', reason: REASONS[code] ?? err.detail ?? 'not probeable', url };
  }
  const input = registerSchema.safeParse({
    server_url: url,
    name: candidate.name,
    description: candidate.description ?? undefined,
    category,
    github_url: candidate.githubUrl ?? undefined,
  });
  if (!input.success) {
    const issue = input.error.issues[0];
    return {
      label,
      status: 'skipped',
      reason: `invalid ${issue?.path.join('.') ?? 'details'}: ${issue?.message ?? ''}`.trim(),
      url,
    };
  }
  const existing = await runtime.repos.servers.findByUrl(url);
  if (existing?.source === 'registered') {
    return {
      label,
      status: 'skipped',
      reason: "registered by its owner (owner's details kept)",
      url,
      slug: existing.slug,
    };
  }
  const description = input.data.description ?? null;
  const githubUrl = input.data.github_url ?? null;
  if (
    existing?.source === 'imported' &&
    existing.name === input.data.name &&
    existing.description === description &&
    existing.category === category &&
    existing.github_url === githubUrl
  ) {
    return { label, status: 'skipped', reason: 'already imported, unchanged', url, slug: existing.slug };
  }
  const { server, created } = await runtime.repos.servers.upsert({
    url,
    name: input.data.name,
    description,
    category,
    github_url: githubUrl,
    source: 'imported',
  });
  if (created) {
    await runtime.repos.audit.append([
      {
        event_id: `evt_imp_${server.id}_${Date.now().toString(36)}`,
        event_type: 'registration',
        occurred_at: new Date(),
        server_id: server.id,
        agent_id: null,
        key_id: null,
        receipt_id: null,
        payload: {
          server_url: server.url,
          name: server.name,
          category: server.category,
          created,
          source: 'imported',
          registry_name: candidate.registryName,
        },
      },
    ]);
  }
  return { label, status: created ? 'added' : 'updated', url, slug: server.slug };
}

/** "added 3 · updated 1 · skipped 4", then each skipped entry with its reason. */
export function formatSummary(source: string, outcomes: ImportOutcome[], limit = 100): string {
  const count = (status: ImportOutcome['status']) => outcomes.filter((o) => o.status === status).length;
  const lines = [
    `Imported ${source}: ${outcomes.length} entr${outcomes.length === 1 ? 'y' : 'ies'}`,
    `  added    ${count('added')}`,
    `  updated  ${count('updated')}`,
    `  skipped  ${count('skipped')}`,
  ];
  const skipped = outcomes.filter((o) => o.status === 'skipped');
  if (skipped.length > 0) {
    const byReason = new Map<string, number>();
    for (const o of skipped) {
      const key = o.reason?.startsWith('duplicate of') ? 'duplicate' : (o.reason ?? 'unknown');
      byReason.set(key, (byReason.get(key) ?? 0) + 1);
    }
    lines.push('', 'Skipped, by reason:');
    for (const [reason, n] of [...byReason].sort((a, b) => b[1] - a[1]))
      lines.push(`  ${String(n).padStart(4)}  ${reason}`);
    lines.push('', 'Skipped entries:');
    for (const o of skipped.slice(0, limit)) lines.push(`  - ${o.label}: ${o.reason}`);
    if (skipped.length > limit) lines.push(`  … and ${skipped.length - limit} more (use --json for all)`);
  }
  return `${lines.join('\n')}\n`;
}

async function readSource(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function registerImportCommand(program: Command) {
  program
    .command('import')
    .description('Import servers from an MCP Registry server list or server.json (a file, or - for stdin)')
    .argument('<file>', 'registry JSON: a /v0/servers response or a server.json; - reads stdin')
    .option('--category <name>', 'category for the imported servers', 'other')
    .option('--json', 'print the outcome of every entry as JSON instead of a summary')
    .action(async (file: string, opts: { category: string; json?: boolean }) => {
      if (!isCategory(opts.category.trim().toLowerCase())) {
        process.stderr.write(`--category must be one of ${CATEGORIES.join(', ')}\n`);
        process.exit(1);
      }
      let entries: ParsedEntry[];
      try {
        entries = parseRegistryDocument(JSON.parse(await readSource(file)));
      } catch (err) {
        const why =
          err instanceof RegistryFormatError || err instanceof SyntaxError ? err.message : String(err);
        process.stderr.write(`cannot import ${file}: ${why}\n`);
        process.exit(1);
      }
      const config = loadConfigOrExit();
      const runtime = await openRuntime(
        config,
        createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 'observatory-import'),
      );
      // a bar only on a terminal: piped output stays a clean summary
      const bar =
        process.stdout.isTTY && !opts.json
          ? new SingleBar(
              {
                format: 'importing [{bar}] {value}/{total}',
                hideCursor: true,
                clearOnComplete: true,
                stream: process.stdout,
              },
              Presets.shades_classic,
            )
          : null;
      bar?.start(entries.length, 0);
      try {
        const outcomes = await importRegistryEntries(runtime, entries, {
          category: opts.category,
          onProgress: (done) => bar?.update(done),
        });
        bar?.stop();
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ source: file, outcomes }, null, 2)}\n`
            : formatSummary(file === '-' ? 'stdin' : file, outcomes),
        );
      } finally {
        bar?.stop();
        await runtime.close();
      }
    });
}
