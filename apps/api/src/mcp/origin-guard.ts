/** Host names a browser page on this machine has as its origin. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding defence for /mcp (MCP Streamable HTTP transport, "Security Warning"): a web
 * page on a foreign site that got its DNS name pointed at us still sends its own Origin, so any
 * Origin other than our public one or a loopback page is refused. Requests without an Origin
 * (agents, CLIs, server-side SDKs — anything that is not a browser) pass.
 */
export function originGuard(publicBaseUrl: string): (origin: string | undefined) => boolean {
  const ownOrigin = new URL(publicBaseUrl).origin;
  return (origin) => {
    if (origin === undefined || origin === ownOrigin) return true;
    // "null" (sandboxed frames, file: pages) and anything unparseable are refused too.
    if (!URL.canParse(origin)) return false;
    const { protocol, hostname } = new URL(origin);
    return (protocol === 'http:' || protocol === 'https:') && LOOPBACK_HOSTS.has(hostname);
  };
}
