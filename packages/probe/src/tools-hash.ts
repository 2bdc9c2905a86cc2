import { createHash } from 'node:crypto';
import { canonicalJson } from '@observatory/core';

export { canonicalJson };

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface HashableTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

export interface ToolsFingerprint {
  /** sha256 of canonical JSON of [{name, description, inputSchema}] sorted by name. */
  toolsHash: string;
  /** Each tool's own hash, sorted by name, so drift can name what changed. */
  tools: Array<{ name: string; hash: string }>;
}

/** Fingerprints a tool list; only what an agent relies on (name, description, input schema) counts. */
export function fingerprintTools(tools: readonly HashableTool[]): ToolsFingerprint {
  const entries = tools.map((tool) => {
    const essential = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    const json = canonicalJson(essential);
    return { name: tool.name, essential, json, hash: sha256Hex(json) };
  });
  // By name; the canonical JSON breaks ties between duplicate names so the order is total.
  entries.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.json < b.json ? -1 : a.json > b.json ? 1 : 0,
  );
  return {
    toolsHash: sha256Hex(canonicalJson(entries.map((e) => e.essential))),
    tools: entries.map((e) => ({ name: e.name, hash: e.hash })),
  };
}
