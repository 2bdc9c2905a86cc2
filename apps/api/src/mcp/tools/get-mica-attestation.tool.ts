import { serverUrlSchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { trustScoreField } from './output-fields.ts';

export const getMicaAttestationTool = defineTool({
  name: 'get_mica_attestation',
  title: 'MiCA / EU AI Act Article 12 attestation',
  guidance:
    'Pass the server URL. Returns the compliance grade (FULL, PARTIAL, NON_COMPLIANT), the risk level (LOW ≥ 75, MEDIUM ≥ 50, HIGH ≥ 25, else CRITICAL), Article 12 status (logging, continuous monitoring, audit exportable), monitoring continuity over the last 30 days, findings, and links to the full audit export (JSON and CSV). It is signed (signature.jws, checkable against jwks_url). A server we do not track answers attestation_status CANNOT_ATTEST: there are no records to attest.',
  inputSchema: z.object({ server_url: serverUrlSchema }),
  outputSchema: z.looseObject({
    schema: z.string(),
    attestation_status: z.enum(['ATTESTED', 'CANNOT_ATTEST']),
    server_url: z.string(),
    attestation_generated_at: z.string(),
    reason: z.string().optional().describe('Why there is no attestation (CANNOT_ATTEST)'),
    server_name: z.string().optional(),
    trust_score: trustScoreField.optional(),
    risk_level: z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']).optional(),
    compliance_grade: z.enum(['FULL', 'PARTIAL', 'NON_COMPLIANT']).optional(),
    article_12_status: z
      .looseObject({
        logging: z.boolean(),
        continuous_monitoring: z.boolean(),
        audit_exportable: z.boolean(),
      })
      .optional(),
    monitoring_days: z.number().optional(),
    monitoring_continuity: z.looseObject({ status: z.string() }).optional(),
    findings: z.array(z.string()).optional(),
    audit_export_url: z.string().optional(),
    audit_export_csv_url: z.string().optional(),
    jwks_url: z.string().optional(),
    signature: z.looseObject({ alg: z.string(), kid: z.string(), jws: z.string() }).optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, { services }) => services.compliance.attestation(args.server_url),
});
