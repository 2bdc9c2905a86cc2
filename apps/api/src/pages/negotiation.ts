/**
 * Content negotiation for the pages: HTML for browsers, JSON for API clients, by the q-values
 * of the Accept header (RFC 9110 §12.5.1), not by whether "text/html" appears somewhere in it.
 */

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept.split(',').flatMap((part) => {
    const [range = '', ...params] = part.trim().split(';');
    const [type, subtype] = range.trim().toLowerCase().split('/');
    if (!type || !subtype) return [];
    const qParam = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return Number.isFinite(q) ? [{ type, subtype, q: Math.min(1, Math.max(0, q)) }] : [];
  });
}

/** The quality the header gives a media type: its most specific matching range wins. */
function quality(ranges: MediaRange[], mediaType: string, viaWildcards: boolean): number {
  const [type, subtype] = mediaType.split('/');
  const exact = ranges.find((r) => r.type === type && r.subtype === subtype);
  if (exact) return exact.q;
  if (!viaWildcards) return 0;
  const partial = ranges.find((r) => r.type === type && r.subtype === '*');
  if (partial) return partial.q;
  return ranges.find((r) => r.type === '*' && r.subtype === '*')?.q ?? 0;
}

const jsonQuality = (ranges: MediaRange[], viaWildcards: boolean) =>
  Math.max(
    quality(ranges, 'application/json', viaWildcards),
    quality(ranges, 'application/problem+json', viaWildcards),
  );

/** A page or JSON? JSON only when the client ranks it above HTML; no header means a page. */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  return jsonQuality(ranges, false) > quality(ranges, 'text/html', true);
}

/**
 * An error as an HTML page only for a client that names HTML itself (a browser navigating)
 * and ranks it at least as high as JSON; everyone else gets problem+json.
 */
export function wantsHtmlError(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const html = Math.max(quality(ranges, 'text/html', false), quality(ranges, 'application/xhtml+xml', false));
  return html > 0 && html >= jsonQuality(ranges, true);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** Text from a query string or path, minus control characters (Postgres text cannot hold NUL). */
export function cleanText(value: unknown, max = 200): string {
  if (typeof value !== 'string') return '';
  return value.replace(CONTROL_CHARACTERS, '').trim().slice(0, max);
}

export function hasControlCharacters(value: string): boolean {
  return value.search(CONTROL_CHARACTERS) !== -1;
}
