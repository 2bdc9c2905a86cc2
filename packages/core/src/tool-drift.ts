/**
 * Tool-list drift: what changed between two tools/list answers of the same server. A server
 * that silently swaps a tool's description or schema is exactly what an agent should hear
 * about, so any change of the tools hash is a drift event of its own, even when the per-tool
 * lists are missing or show no difference.
 */

export interface ToolFingerprint {
  name: string;
  /** sha256 of the tool's canonical JSON (name, description, inputSchema). */
  hash: string;
}

export interface ToolsDiff {
  added: string[];
  removed: string[];
  altered: string[];
}

/** Names sorted; a duplicated name keeps its last hash. */
export function diffTools(previous: readonly ToolFingerprint[], next: readonly ToolFingerprint[]): ToolsDiff {
  const before = new Map(previous.map((t) => [t.name, t.hash]));
  const after = new Map(next.map((t) => [t.name, t.hash]));
  const added: string[] = [];
  const altered: string[] = [];
  for (const [name, hash] of after) {
    const old = before.get(name);
    if (old === undefined) added.push(name);
    else if (old !== hash) altered.push(name);
  }
  const removed = [...before.keys()].filter((name) => !after.has(name));
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { added: added.sort(byName), removed: removed.sort(byName), altered: altered.sort(byName) };
}

export interface ToolsSnapshot {
  /** Hash of the whole tool list; null when the server has not listed its tools yet. */
  hash: string | null;
  tools: readonly ToolFingerprint[] | null;
}

export interface DriftEvent extends ToolsDiff {
  old_hash: string | null;
  new_hash: string;
}

/**
 * A drift event when the tools hash changed, else null. The first listing ever (no previous
 * hash) is not drift, and neither is a probe that got no tool list (new hash null): those say
 * nothing about a change.
 */
export function detectToolDrift(previous: ToolsSnapshot, next: ToolsSnapshot): DriftEvent | null {
  if (next.hash === null || previous.hash === null || previous.hash === next.hash) return null;
  const diff =
    previous.tools && next.tools
      ? diffTools(previous.tools, next.tools)
      : { added: [], removed: [], altered: [] };
  return { old_hash: previous.hash, new_hash: next.hash, ...diff };
}
