/**
 * Reading the official MCP Registry's formats: the server list API response
 * (`{servers: [{server: {…server.json…}, _meta: {…}}], metadata: {nextCursor, count}}`) and a
 * single server.json (`{name, description, version, remotes: [{type, url}], …}`). Only what the
 * observatory can probe matters here: remotes of type streamable-http or sse with an http(s) URL.
 */

const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';

/** One server as the registry describes it, reduced to what an import uses. */
export interface RegistryServer {
  /** Reverse-DNS registry name, e.g. "io.github.acme/weather"; the entry's identity. */
  name: string;
  title: string | null;
  description: string | null;
  repositoryUrl: string | null;
  /** status from the official registry's _meta (active, deprecated, deleted), when present. */
  status: string | null;
  /** The official registry's isLatest: a list response may hold several versions of one name. */
  isLatest: boolean | null;
  remotes: Array<{ type: string; url: string; variables: Record<string, { default?: string }> }>;
}

export type ParsedEntry = { ok: true; server: RegistryServer } | { ok: false; label: string; reason: string };

export class RegistryFormatError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
/** Trimmed text without control characters (the registry is written by anyone). */
const text = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = v.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean || null;
};

function readServer(detail: unknown, meta: unknown, position: number): ParsedEntry {
  if (!isObject(detail)) return { ok: false, label: `entry #${position}`, reason: 'not a server object' };
  const name = text(detail.name);
  if (!name) return { ok: false, label: `entry #${position}`, reason: 'missing name' };
  const official = isObject(meta) && isObject(meta[OFFICIAL_META]) ? meta[OFFICIAL_META] : null;
  const repository = isObject(detail.repository) ? detail.repository : null;
  const remotes = Array.isArray(detail.remotes)
    ? detail.remotes.filter(isObject).map((r) => ({
        type: text(r.type) ?? '',
        url: text(r.url) ?? '',
        variables: isObject(r.variables) ? (r.variables as Record<string, { default?: string }>) : {},
      }))
    : [];
  return {
    ok: true,
    server: {
      name,
      title: text(detail.title),
      description: text(detail.description),
      repositoryUrl: repository ? text(repository.url) : null,
      status: text(official?.status) ?? text(detail.status),
      isLatest: typeof official?.isLatest === 'boolean' ? official.isLatest : null,
      remotes,
    },
  };
}

/**
 * Every entry of a registry document: a list response, a single server.json, or a bare array of
 * either. Throws RegistryFormatError when the document is none of these.
 */
export function parseRegistryDocument(doc: unknown): ParsedEntry[] {
  if (Array.isArray(doc)) return doc.flatMap((item, i) => entriesOfItem(item, i + 1));
  if (isObject(doc) && Array.isArray(doc.servers)) {
    return doc.servers.flatMap((item, i) => entriesOfItem(item, i + 1));
  }
  if (isObject(doc) && (typeof doc.name === 'string' || Array.isArray(doc.remotes))) {
    return [readServer(doc, doc._meta, 1)];
  }
  throw new RegistryFormatError(
    'not an MCP Registry document: expected a server list ({"servers": [...]}) or a server.json ({"name": ..., "remotes": [...]})',
  );
}

function entriesOfItem(item: unknown, position: number): ParsedEntry[] {
  // list responses wrap each server.json as {server, _meta}; older ones put it at the top level
  if (isObject(item) && isObject(item.server)) return [readServer(item.server, item._meta, position)];
  return [readServer(item, isObject(item) ? item._meta : undefined, position)];
}

export type Candidate =
  | {
      ok: true;
      url: string;
      name: string;
      description: string | null;
      githubUrl: string | null;
      registryName: string;
    }
  | { ok: false; reason: string };

const PROBEABLE_TYPES = ['streamable-http', 'sse'];

/** Fills {variables} of a remote URL template from their defaults; null if one has none. */
function expandTemplate(remote: RegistryServer['remotes'][number]): string | null {
  let missing = false;
  const url = remote.url.replace(/\{([^{}]+)\}/g, (_, key: string) => {
    const value = remote.variables[key]?.default;
    if (typeof value === 'string' && value) return value;
    missing = true;
    return '';
  });
  return missing ? null : url;
}

/** The server the observatory would track for a registry entry, or why it cannot. */
export function candidateFrom(server: RegistryServer): Candidate {
  if (server.status === 'deleted') return { ok: false, reason: 'deleted in the registry' };
  const remotes = server.remotes.filter((r) => PROBEABLE_TYPES.includes(r.type));
  if (server.remotes.length === 0) return { ok: false, reason: 'no remote (local package only)' };
  if (remotes.length === 0) return { ok: false, reason: 'no streamable-http or sse remote' };
  // streamable HTTP first: the probe falls back to SSE by itself if a server only speaks that
  const remote = remotes.find((r) => r.type === 'streamable-http') ?? remotes[0]!;
  const url = expandTemplate(remote);
  if (url === null) return { ok: false, reason: 'URL template without default values' };
  if (!URL.canParse(url)) return { ok: false, reason: 'invalid URL' };
  if (!['http:', 'https:'].includes(new URL(url).protocol))
    return { ok: false, reason: 'not an http(s) URL' };
  const github =
    server.repositoryUrl && /^https:\/\/github\.com\//i.test(server.repositoryUrl)
      ? server.repositoryUrl
      : null;
  return {
    ok: true,
    url,
    name: (server.title ?? server.name).slice(0, 120).trim(),
    description: server.description?.slice(0, 2000) ?? null,
    githubUrl: github,
    registryName: server.name,
  };
}
