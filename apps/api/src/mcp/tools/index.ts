import type { ToolDefinition } from '../tool-definition.ts';
import { checkAnomalyTool } from './check-anomaly.tool.ts';
import { checkTrustTool } from './check-trust.tool.ts';
import { getBaselinesTool } from './get-baselines.tool.ts';
import { getComplianceReportTool } from './get-compliance-report.tool.ts';
import { getLeaderboardTool } from './get-leaderboard.tool.ts';
import { getMicaAttestationTool } from './get-mica-attestation.tool.ts';
import { getServerHistoryTool } from './get-server-history.tool.ts';
import { observatoryStatsTool } from './observatory-stats.tool.ts';
import { registerServerTool } from './register-server.tool.ts';
import { reportInteractionTool } from './report-interaction.tool.ts';

/** Every tool offered at /mcp, in the order of SPEC §4 (and of MCP_TOOLS in /api/info). */
export const MCP_TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  checkTrustTool,
  reportInteractionTool,
  getLeaderboardTool,
  getBaselinesTool,
  checkAnomalyTool,
  registerServerTool,
  getServerHistoryTool,
  observatoryStatsTool,
  getComplianceReportTool,
  getMicaAttestationTool,
];
