import { agentKeysService } from './agents/agent-keys.service.ts';
import { type AttestationService, attestationService } from './compliance/attestation.ts';
import {
  type ComplianceExport,
  type ComplianceFilters,
  complianceExport,
} from './compliance/compliance-export.ts';
import { openKeyRing } from './receipts/key-ring.ts';
import { receiptsService } from './receipts/receipts.service.ts';
import { reportIngestService } from './reports/report-ingest.service.ts';
import type { Runtime } from './runtime.ts';
import { registrationService } from './servers/registration.service.ts';
import { serverResolver } from './servers/server-resolver.ts';
import { baselinesCache } from './trust/baselines-cache.ts';
import { directoryService } from './trust/directory.service.ts';
import { insightsService } from './trust/insights.service.ts';
import { trustService } from './trust/trust.service.ts';

/**
 * The service layer: one instance per process, shared by the REST routes, the MCP tools and
 * the HTML pages, so every front end gives the same answer to the same question.
 */
export async function createServices(runtime: Runtime) {
  const servers = serverResolver(runtime);
  const ring = await openKeyRing(runtime);
  const receipts = receiptsService(runtime, ring);
  const agentKeys = agentKeysService(runtime, receipts);
  const baselines = baselinesCache(runtime);
  const trust = trustService({ runtime, servers, baselines, agentKeys, receipts });
  return {
    runtime,
    servers,
    receipts,
    agentKeys,
    trust,
    directory: directoryService(runtime),
    insights: insightsService({ runtime, trust, baselines }),
    compliance: complianceService(
      complianceExport(runtime, receipts, servers),
      attestationService({ runtime, trust, ring }),
    ),
    reports: reportIngestService(runtime, servers, trust),
    registration: registrationService(runtime, servers),
  };
}

/** The Article 12 trail and the MiCA / EU AI Act attestation, as REST and MCP call them. */
function complianceService(exporter: ComplianceExport, attestations: AttestationService) {
  return {
    /** /api/compliance and get_compliance_report: one cursor page of the audit trail with its proofs. */
    report: (filters: ComplianceFilters) => exporter.page(filters),
    /** /api/attestation and get_mica_attestation: a signed attestation, or CANNOT_ATTEST. */
    attestation: (serverUrl: string) => attestations.attest(serverUrl),
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
