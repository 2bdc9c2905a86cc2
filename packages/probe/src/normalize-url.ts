/**
 * The canonical form of a server URL, used as the unique key of the servers table:
 * lower-case scheme and host, default port dropped (both done by WHATWG URL parsing, which also
 * normalizes numeric IPv4 forms and IDN hosts), fragment and credentials dropped, path and query
 * kept as given, and a bare "/" path removed so `https://a.dev` and `https://a.dev/` are one server.
 * Throws TypeError on an unparseable URL.
 */
export function normalizeServerUrl(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.protocol}//${parsed.host}${path}${parsed.search}`;
}
