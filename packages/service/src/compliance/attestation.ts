import type { KeyRing } from '@observatory/receipts';
import type { Runtime } from '../runtime.ts';
import type { TrustService } from '../trust/trust.service.ts';
import { assessServerCompliance } from './compliance-assessment.ts';

export const ATTESTATION_SCHEMA = 'observatory.mica-eu-ai-act-art12-attestation/v1';
const ATTESTATION_TYP = 'observatory-attestation+jwt';
const DAY_MS = 86_400_000;

/**
 * get_mica_attestation and GET /api/attestation: the compliance picture of a server over the
 * last 30 days (COMPAT.md fields), itself signed as a compact JWS with the receipt key so it
 * can be checked offline against /.well-known/jwks.json.
 */
export function attestationService(deps: { runtime: Runtime; trust: TrustService; ring: KeyRing }) {
  const { runtime, trust, ring } = deps;
  const base = runtime.config.publicBaseUrl;

  return {
    async attest(serverUrl: string) {
      const now = new Date();
      const server = await trust.find(serverUrl);
      if (!server) {
        return {
          schema: ATTESTATION_SCHEMA,
          attestation_status: 'CANNOT_ATTEST' as const,
          server_url: serverUrl,
          reason:
            'The server is not tracked: there are no records to attest. Register it to start monitoring.',
          attestation_generated_at: now.toISOString(),
        };
      }
      const assessment = await trust.assess(server, now);
      const compliance = await assessServerCompliance(runtime.db.sql, {
        serverId: server.id,
        createdAt: server.created_at,
        from: new Date(now.getTime() - 30 * DAY_MS),
        to: now,
        trustScore: assessment.score,
        expectedIntervalS: runtime.config.PROBE_INTERVAL_S,
        auditExportable: true,
      });
      const exportUrl = `${base}/api/compliance?server_url=${encodeURIComponent(server.url)}`;
      const body = {
        schema: ATTESTATION_SCHEMA,
        attestation_status: 'ATTESTED' as const,
        issuer: base,
        server_url: server.url,
        server_name: server.name,
        category: server.category,
        trust_score: assessment.score,
        verdict: assessment.verdict,
        risk_level: compliance.risk_level,
        compliance_grade: compliance.compliance_grade,
        article_12_status: compliance.article_12_status,
        monitoring_days: compliance.monitoring_days,
        monitoring_continuity: compliance.continuity,
        findings: compliance.findings,
        period: {
          from: new Date(Math.max(server.created_at.getTime(), now.getTime() - 30 * DAY_MS)).toISOString(),
          to: now.toISOString(),
        },
        records_in_period: compliance.records,
        audit_export_url: exportUrl,
        audit_export_csv_url: `${exportUrl}&format=csv`,
        jwks_url: `${base}/.well-known/jwks.json`,
        attestation_generated_at: now.toISOString(),
      };
      return { ...body, signature: { alg: 'EdDSA', kid: ring.kid, jws: ring.sign(ATTESTATION_TYP, body) } };
    },
  };
}

export type AttestationService = ReturnType<typeof attestationService>;
