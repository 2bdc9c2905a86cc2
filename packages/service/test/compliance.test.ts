import { canonicalJson } from '@observatory/core';
import { fromHex, leafHash, rootFromRange, toHex, verifyCheckpoint } from '@observatory/receipts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditLog } from '../src/compliance/audit-verification.ts';
import { takeComplianceSnapshots } from '../src/compliance/compliance-snapshots.ts';
import { createServices, type Services } from '../src/services.ts';
import { createTestRuntime, type TestRuntime } from '../src/testing.ts';

type Page = Awaited<ReturnType<Services['compliance']['report']>>;

/** What an auditor does with a page: rebuild the leaves of its range and check the root. */
function pageProvesItself(page: Page): boolean {
  const { from, to } = page.integrity.log_index_range;
  if (from === to) return true;
  const leaves = new Map<number, Uint8Array>();
  for (const i of page.interactions) leaves.set(i.audit.index, leafHash(canonicalJson(i.audit.event)));
  for (const o of page.integrity.other_leaf_hashes) leaves.set(o.index, fromHex(o.leaf_hash)!);
  const ordered: Uint8Array[] = [];
  for (let idx = from; idx < to; idx++) {
    const leaf = leaves.get(idx);
    if (!leaf) return false; // a hole: something in the range was left out
    ordered.push(leaf);
  }
  const root = rootFromRange(
    ordered,
    from,
    page.integrity.checkpoint.tree_size,
    page.integrity.range_proof.map((h) => fromHex(h)!),
  );
  return root !== null && toHex(root) === page.integrity.checkpoint.root_hash;
}

describe('Article 12 audit export', () => {
  let runtime: TestRuntime;
  let services: Services;
  beforeAll(async () => {
    runtime = await createTestRuntime();
    services = await createServices(runtime);
    await services.registration.register({
      server_url: 'http://127.0.0.1:9/alpha',
      name: 'Alpha',
      category: 'data',
    });
    for (let i = 0; i < 30; i++) {
      await services.reports.ingest(
        {
          server_url: i % 2 ? 'http://127.0.0.1:9/alpha' : 'http://127.0.0.1:9/beta',
          success: i % 5 !== 0,
          latency_ms: 100 + i,
          tool_name: `tool-${i % 3}`,
          ...(i % 5 === 0 ? { error_type: 'timeout' as const, error_message: 'took too long' } : {}),
        },
        { agentId: i % 3 === 0 ? 'agent-a' : 'agent-b' },
      );
    }
    const key = (await services.agentKeys.issueAnonymousKey('127.0.0.1')).api_key;
    await services.trust.agentQuery('alpha', `Bearer ${key}`);
  });
  afterAll(async () => runtime?.close());

  it('pages through every recorded use, each page proving itself against a signed checkpoint', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await services.compliance.report({ limit: 7, cursor });
      expect(page.compliance_framework.join(' ')).toContain('Article 12');
      expect(pageProvesItself(page)).toBe(true);
      const jwks = services.receipts.jwks();
      expect((await verifyCheckpoint(page.integrity.checkpoint.jws, jwks)).valid).toBe(true);
      seen.push(...page.interactions.map((i) => i.interaction_id));
      cursor = page.page.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toHaveLength(31); // 30 reports + 1 trust query
    expect(new Set(seen).size).toBe(31);
  });

  it('filters by agent, server and dates, and a filtered page still proves its whole range', async () => {
    const byAgent = await services.compliance.report({ agent_id: 'agent-a' });
    expect(byAgent.total_records).toBe(10);
    expect(byAgent.interactions.every((i) => i.agent_id === 'agent-a')).toBe(true);
    expect(byAgent.integrity.other_leaf_hashes.length).toBeGreaterThan(0);
    expect(pageProvesItself(byAgent)).toBe(true);

    const byServer = await services.compliance.report({ server_url: 'http://127.0.0.1:9/alpha' });
    expect(byServer.interactions.every((i) => i.server.url === 'http://127.0.0.1:9/alpha')).toBe(true);
    expect(byServer.total_records).toBe(16); // 15 reports + the trust query

    const today = new Date().toISOString().slice(0, 10);
    expect((await services.compliance.report({ start_date: today, end_date: today })).total_records).toBe(31);
    expect((await services.compliance.report({ end_date: '2020-01-01' })).total_records).toBe(0);
    await expect(services.compliance.report({ start_date: '2026-02-30' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      services.compliance.report({ start_date: '2026-05-02', end_date: '2026-05-01' }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(services.compliance.report({ cursor: 'not-ours' })).rejects.toMatchObject({ status: 400 });
  });

  it('exposes an edited or a deleted row: in the export proofs and in the consistency check', async () => {
    expect((await verifyAuditLog(runtime, services.receipts)).valid).toBe(true);
    const reports = await runtime.db.sql<{ idx: number }[]>`
      SELECT idx FROM audit_events WHERE event_type = 'report' AND payload->>'success' = 'false' ORDER BY idx`;
    const [edit, remove] = [reports[0]!.idx, reports[1]!.idx];
    // turn a failed call into a success, as someone covering up an outage would
    await runtime.db
      .sql`UPDATE audit_events SET payload = jsonb_set(payload, '{success}', 'true') WHERE idx = ${edit}`;
    const edited = await services.compliance.report({ limit: 1000 });
    expect(pageProvesItself(edited)).toBe(false);
    const check = await verifyAuditLog(runtime, services.receipts);
    expect(check.valid).toBe(false);
    expect(check.altered_indexes).toEqual([edit]);

    await runtime.db.sql`DELETE FROM audit_events WHERE idx = ${remove}`;
    const afterDelete = await verifyAuditLog(runtime, services.receipts);
    expect(afterDelete.missing_indexes).toEqual([remove]);
    expect(pageProvesItself(await services.compliance.report({ limit: 1000 }))).toBe(false);
  });
});

describe('compliance snapshots and attestations', () => {
  let runtime: TestRuntime;
  let services: Services;
  beforeAll(async () => {
    runtime = await createTestRuntime();
    services = await createServices(runtime);
  });
  afterAll(async () => runtime?.close());

  it('takes one snapshot per server per day, however often it runs', async () => {
    await services.registration.register({ server_url: 'http://127.0.0.1:9/one', name: 'One' });
    await services.registration.register({ server_url: 'http://127.0.0.1:9/two', name: 'Two' });
    const today = new Date().toISOString().slice(0, 10);
    const first = await takeComplianceSnapshots(runtime, today);
    const again = await takeComplianceSnapshots(runtime, today);
    expect(first).toEqual({ servers: 2, created: 2 });
    expect(again).toEqual({ servers: 2, created: 0 });
    const rows = await runtime.db
      .sql`SELECT grade, risk_level FROM compliance_snapshots WHERE day = ${today}::date`;
    expect(rows).toHaveLength(2);
    // nothing measured yet: not compliant, and unknown is a risk
    expect(rows.every((r) => r.grade === 'NON_COMPLIANT' && r.risk_level === 'HIGH')).toBe(true);
  });

  it('attests a tracked server (signed) and cannot attest an unknown one', async () => {
    const attestation = await services.compliance.attestation('http://127.0.0.1:9/one');
    expect(attestation).toMatchObject({
      attestation_status: 'ATTESTED',
      compliance_grade: 'NON_COMPLIANT',
      monitoring_days: 1,
    });
    if (attestation.attestation_status !== 'ATTESTED') throw new Error('unreachable');
    expect(Object.keys(attestation.article_12_status).sort()).toEqual([
      'audit_exportable',
      'continuous_monitoring',
      'logging',
    ]);
    expect(attestation.audit_export_url).toContain('/api/compliance?server_url=');
    const { compactVerify, createLocalJWKSet } = await import('jose');
    const { payload } = await compactVerify(
      attestation.signature.jws,
      createLocalJWKSet(services.receipts.jwks() as never),
    );
    expect(JSON.parse(new TextDecoder().decode(payload)).risk_level).toBe(attestation.risk_level);
    expect(await services.compliance.attestation('https://never.example/mcp')).toMatchObject({
      attestation_status: 'CANNOT_ATTEST',
    });
  });
});

describe('retention', () => {
  it('prunes audit rows past AUDIT_RETENTION_DAYS and the log still verifies; raw probe partitions go, rollups stay', async () => {
    const runtime = await createTestRuntime({ env: { AUDIT_RETENTION_DAYS: '200', RETENTION_DAYS: '30' } });
    try {
      const services = await createServices(runtime);
      const { runMaintenance } = await import('../src/analysis/maintenance.ts');
      const old = new Date(Date.now() - 300 * 86_400_000);
      await runtime.repos.audit.append(
        Array.from({ length: 12 }, (_, i) => ({
          event_id: `evt_old_${i}`,
          event_type: 'report' as const,
          occurred_at: old,
          server_id: null,
          agent_id: 'old-agent',
          key_id: null,
          receipt_id: null,
          payload: { success: true, i },
        })),
      );
      await services.reports.ingest({ server_url: 'http://127.0.0.1:9/new', success: true }, {});
      await services.receipts.checkpointNow();

      // a raw probe partition from 60 days ago, with its rollup
      const day = new Date(Date.now() - 60 * 86_400_000);
      await runtime.repos.probeResults.ensurePartitions(day, day);
      const server = (await runtime.repos.servers.findByUrl('http://127.0.0.1:9/new'))!;
      await runtime.db.sql`
        INSERT INTO probe_results (probe_id, scheduled_at, server_id, started_at, outcome, total_ms)
        VALUES ('old-probe', ${day}, ${server.id}, ${day}, 'up', 12)`;
      await runtime.repos.rollups.recomputeDay(day.toISOString().slice(0, 10));

      const result = await runMaintenance(runtime);
      expect(result.auditRowsPruned).toBe(12);
      expect(result.partitionsDropped).toBeGreaterThanOrEqual(1);
      expect(await runtime.db.sql`SELECT 1 FROM probe_results WHERE probe_id = 'old-probe'`).toHaveLength(0);
      expect(await runtime.db.sql`SELECT 1 FROM rollups_hourly WHERE server_id = ${server.id}`).toHaveLength(
        1,
      );

      const check = await verifyAuditLog(runtime, services.receipts);
      expect(check).toMatchObject({ valid: true, pruned_below: 12 });
      const page = await services.compliance.report({});
      expect(page.interactions.map((i) => i.agent_id)).not.toContain('old-agent');
      expect(pageProvesItself(page)).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
