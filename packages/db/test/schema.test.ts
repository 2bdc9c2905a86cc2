import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditRepository,
  type Database,
  type InteractionReportRecord,
  interactionReportsRepository,
  listMigrations,
  migrate,
  openDatabase,
  readDataSince,
  reportAuditEvent,
  type Sql,
} from '../src/index.ts';
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '../src/test-database.ts';

/** Tables, columns (name, type, nullability, default), indexes and functions, partitions left out. */
async function describeSchema(sql: Sql) {
  const columns = await sql`
    SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
    WHERE c.table_schema = 'public' AND c.table_name !~ '^probe_results_[0-9]{8}$'
    ORDER BY c.table_name, c.column_name`;
  const indexes = await sql`
    SELECT tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND tablename !~ '^probe_results_[0-9]{8}$'
    ORDER BY tablename, indexname`;
  const constraints = await sql`
    SELECT conrelid::regclass::text AS rel, conname, pg_get_constraintdef(oid) AS def
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype <> 'n' -- PG 18 (PGlite) lists NOT NULL here; columns cover it
      AND conrelid::regclass::text !~ '^probe_results_[0-9]{8}$'
    ORDER BY rel, conname`;
  const functions = await sql`
    SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY proname`;
  return {
    columns: [...columns],
    indexes: [...indexes],
    constraints: [...constraints],
    functions: [...functions],
  };
}

describe('migrations', () => {
  let pg: TestDatabase;
  let lite: Database;
  beforeAll(async () => {
    pg = await createTestDatabase();
    lite = await createEmbeddedTestDatabase();
  });
  afterAll(async () => {
    await pg?.drop();
    await lite?.close();
  });

  it('give the same schema on PGlite and on Postgres', async () => {
    const a = await describeSchema(pg.sql);
    const b = await describeSchema(lite.sql);
    expect(a.columns.length).toBeGreaterThan(100);
    expect(b).toEqual(a);
  });

  it('are recorded and not applied twice', async () => {
    const again = await migrate(pg.sql);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toBeGreaterThanOrEqual(1);
    const rows = await pg.sql`SELECT name FROM schema_migrations`;
    expect(rows.map((r) => r.name)).toContain('0001_init');
  });

  it('apply once when several processes migrate at the same time', async () => {
    const fresh = await createTestDatabase({ migrate: false });
    try {
      const others = await Promise.all(
        [1, 2, 3].map(() => openDatabase({ databaseUrl: fresh.url, poolMax: 2 })),
      );
      const reports = await Promise.all(others.map((o) => migrate(o.sql)));
      // each migration applied by exactly one of the three, all of them by someone
      const all = (await listMigrations()).map((m) => m.name);
      expect(reports.flatMap((r) => r.applied).sort()).toEqual(all);
      expect(reports.filter((r) => r.applied.length > 0)).toHaveLength(1);
      await Promise.all(others.map((o) => o.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('record the day the data store was created as data_since', async () => {
    expect(await readDataSince(pg.sql)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

/** A database migrated up to (not including) `stop`, as a deployment of that version left it. */
async function migratedUpTo(stop: string): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrate: false });
  await db.sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
  for (const m of await listMigrations()) {
    if (m.name >= stop) break;
    await db.sql.unsafe(await readFile(m.file, 'utf8')).simple();
    await db.sql`INSERT INTO schema_migrations (name) VALUES (${m.name})`;
  }
  return db;
}

describe('migration 0003: receipts become a view of the audit log', () => {
  const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  // a JWS whose header base64url needs padding to decode (its length is not a multiple of 4)
  const jws = `${b64url({ alg: 'EdDSA', kid: 'key-2026-a', typ: 'x' })}.${b64url({ rid: 'rcpt_1' })}.c2ln`;

  async function logReceipt(sql: Sql, receiptJws: string) {
    await sql`
      INSERT INTO audit_events (idx, event_id, event_type, occurred_at, server_id, agent_id, key_id,
                                receipt_id, payload, leaf_hash)
      VALUES (0, 'evt_1', 'agent_query', '2026-11-01T10:00:00.123Z', NULL, 'obs_abc', 7, 'rcpt_1',
              ${sql.json({ query: 'q', server_url: 'https://a.example/mcp', verdict: 'PASS', score: 0.91, jws: receiptJws })},
              '\\x00')`;
  }

  it('keeps every stored receipt, read back from its audit event', async () => {
    const db = await migratedUpTo('0003');
    try {
      expect(jws.split('.')[0]!.length % 4).not.toBe(0);
      await logReceipt(db.sql, jws);
      await db.sql`
        INSERT INTO receipts (id, jws, server_id, server_url, verdict, score, issued_at, kid, audit_index)
        VALUES ('rcpt_1', ${jws}, NULL, 'https://a.example/mcp', 'PASS', 0.91, '2026-11-01T10:00:00.123Z', 'key-2026-a', 0)`;
      const before = await db.sql`SELECT * FROM receipts`;
      expect((await migrate(db.sql)).applied).toContain('0003_receipts_view_of_audit_log');
      const after = await db.sql`SELECT * FROM receipts`;
      expect(after).toEqual(before);
      const [kind] =
        await db.sql`SELECT table_type FROM information_schema.tables WHERE table_name = 'receipts'`;
      expect(kind?.table_type).toBe('VIEW');

      // a process of the previous release, mid rolling upgrade: its writes are accepted and change nothing
      const previousRelease = await db.sql`
        INSERT INTO receipts (id, jws, server_id, server_url, verdict, score, issued_at, kid, audit_index)
        VALUES ('rcpt_2', ${jws}, NULL, 'https://a.example/mcp', 'PASS', 0.91, now(), 'key-2026-a', 1)`;
      expect(previousRelease.count).toBe(0);
      await db.sql`DELETE FROM receipts WHERE audit_index < 10`;
      expect(await db.sql`SELECT * FROM receipts`).toEqual(before);
    } finally {
      await db.drop();
    }
  });

  it('refuses to drop a receipt that is not in the log', async () => {
    const db = await migratedUpTo('0003');
    try {
      await logReceipt(db.sql, 'another.jws.value');
      await db.sql`
        INSERT INTO receipts (id, jws, server_id, server_url, verdict, score, issued_at, kid, audit_index)
        VALUES ('rcpt_1', ${jws}, NULL, 'https://a.example/mcp', 'PASS', 0.91, now(), 'key-2026-a', 0)`;
      await expect(migrate(db.sql)).rejects.toThrow(/1 receipts have no matching audit event/);
      const [kind] =
        await db.sql`SELECT table_type FROM information_schema.tables WHERE table_name = 'receipts'`;
      expect(kind?.table_type).toBe('BASE TABLE');
    } finally {
      await db.drop();
    }
  });
});

describe('migration 0005: reports become a view of the audit log', () => {
  const columns = `report_id, server_id, agent_id, key_id, received_at, success, latency_ms, tool_name,
    error_type, error_message, http_status`;
  const reportAt = (i: number): InteractionReportRecord => ({
    report_id: `rpt_${i}`,
    server_id: 1,
    agent_id: `agent-${i % 2}`,
    key_id: i % 2 === 0 ? null : 7,
    received_at: new Date(Date.UTC(2026, 10, 1, 10, 0, i, 123)),
    success: i % 3 !== 0,
    latency_ms: i % 3 === 0 ? null : 100.25 * i,
    tool_name: i % 4 === 0 ? null : `tool "${i}"`,
    error_type: i % 3 === 0 ? 'timeout' : null,
    error_message: i % 3 === 0 ? `no answer in ${i} s, {quoted} "text"` : null,
    http_status: i % 3 === 0 ? null : 200,
  });

  /** A database as the previous release left it: these reports stored, those of them audited. */
  async function previousRelease(reports: InteractionReportRecord[], audited: InteractionReportRecord[]) {
    const db = await migratedUpTo('0005');
    await db.sql`
      INSERT INTO servers (url, slug, name, category, source) VALUES ('https://a.example/mcp', 'a', 'A', 'other', 'registered')`;
    for (const r of reports) {
      await db.sql`
        INSERT INTO interaction_reports (report_id, server_id, agent_id, key_id, received_at, success, latency_ms,
          tool_name, error_type, error_message, http_status)
        VALUES (${r.report_id}, ${r.server_id}, ${r.agent_id}, ${r.key_id}, ${r.received_at}, ${r.success},
          ${r.latency_ms}, ${r.tool_name}, ${r.error_type}, ${r.error_message}, ${r.http_status})`;
    }
    await auditRepository(db.sql).append(audited.map(reportAuditEvent));
    return db;
  }
  const tableType = async (sql: Sql) =>
    (await sql`SELECT table_type FROM information_schema.tables WHERE table_name = 'interaction_reports'`)[0]
      ?.table_type;

  it('keeps every stored report, read back field for field from its audit event', async () => {
    const before = [1, 2, 3, 4].map(reportAt);
    const db = await previousRelease(before, before);
    try {
      const stored = await db.sql.unsafe(`SELECT ${columns} FROM interaction_reports ORDER BY report_id`);
      expect(stored).toHaveLength(4);
      expect((await migrate(db.sql)).applied).toContain('0005_reports_view_of_audit_log');
      expect(await tableType(db.sql)).toBe('VIEW');
      expect(await db.sql.unsafe(`SELECT ${columns} FROM interaction_reports ORDER BY report_id`)).toEqual(
        stored,
      );

      // from now on a report is its audit event only
      const after = [5, 6].map(reportAt);
      await auditRepository(db.sql).append(after.map(reportAuditEvent));
      expect(await db.sql.unsafe(`SELECT ${columns} FROM interaction_reports ORDER BY report_id`)).toEqual([
        ...stored,
        ...after,
      ]);
      expect(await interactionReportsRepository(db.sql).countForServer(1)).toBe(6);
    } finally {
      await db.drop();
    }
  });

  it('lets rows go whose audit event retention pruned, and refuses any other row missing from the log', async () => {
    const [old, kept] = [reportAt(1), reportAt(2)];
    // the audit event of `old` is gone, and the log says it pruned: `old` is past the retention
    const pruned = await previousRelease([old, kept], [kept]);
    try {
      await pruned.sql`INSERT INTO meta (key, value) VALUES ('audit_pruned_below', '5')`;
      await migrate(pruned.sql);
      expect((await pruned.sql`SELECT report_id FROM interaction_reports`).map((r) => r.report_id)).toEqual([
        kept.report_id,
      ]);
    } finally {
      await pruned.drop();
    }
    // nothing was pruned, yet a row has no event: the two copies disagree, so nothing changes
    const disagreeing = await previousRelease([old, kept], [kept]);
    try {
      await expect(migrate(disagreeing.sql)).rejects.toThrow(/1 reports have no audit event/);
      expect(await tableType(disagreeing.sql)).toBe('BASE TABLE');
      expect(await interactionReportsRepository(disagreeing.sql).count()).toBe(2);
    } finally {
      await disagreeing.drop();
    }
  });

  it('refuses the previous release’s report insert, so its batch fails whole and nothing is acknowledged', async () => {
    const db = await createTestDatabase();
    try {
      await expect(db.sql`
        INSERT INTO interaction_reports (report_id, server_id, agent_id, received_at, success)
        VALUES ('rpt_old', 1, 'anonymous', now(), true)
        ON CONFLICT (report_id) DO NOTHING`).rejects.toMatchObject({
        code: '0A000', // the view's columns are read from the payload: they take no insert
        message: expect.stringMatching(/cannot insert into column "report_id" of view "interaction_reports"/),
      });
      expect(await interactionReportsRepository(db.sql).count()).toBe(0);
    } finally {
      await db.drop();
    }
  });
});

describe('embedded data directory', () => {
  it('keeps data across a close and a reopen', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'obs-pgdata-'));
    try {
      const first = await openDatabase({ dataDir: dir });
      await migrate(first.sql);
      await first.sql`INSERT INTO meta (key, value) VALUES ('probe', 'kept')`;
      await first.close();

      const second = await openDatabase({ dataDir: dir });
      const [row] = await second.sql`SELECT value FROM meta WHERE key = 'probe'`;
      expect(row?.value).toBe('kept');
      expect((await migrate(second.sql)).applied).toEqual([]);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
