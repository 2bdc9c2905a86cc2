import type { ReportReceipt } from '@observatory/service';
import { describe, expect, it } from 'vitest';
import { reportAnswerJson } from './report.routes.ts';

describe('reportAnswerJson', () => {
  it('is the JSON text of { ...receipt, message }, field for field and in order', () => {
    const receipts: ReportReceipt[] = [
      {
        new_trust_score: 87.5,
        total_interactions: 1200,
        success_rate: 0.97,
        recorded: true,
        report_id: 'rpt_mfx0k1a2b3c4d5e6f708192a3b4c5d6e7f80',
        server_url: 'https://mcp.example.com/mcp',
        server_created: false,
        received_at: '2026-11-22T09:00:00.123Z',
      },
      {
        new_trust_score: null,
        total_interactions: 0,
        success_rate: null,
        recorded: true,
        report_id: 'rpt_x',
        server_url: 'https://example.com/a"b\\c/\u00e9?q=<x>&y=\u2028',
        server_created: true,
        received_at: '2026-11-22T09:00:00.000Z',
      },
    ];
    for (const receipt of receipts) {
      expect(reportAnswerJson(receipt)).toBe(
        JSON.stringify({
          ...receipt,
          message: 'Report stored; the trust score will reflect it within seconds.',
        }),
      );
    }
  });
});
