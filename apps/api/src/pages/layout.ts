import { SERVICE_NAME, SERVICE_VERSION } from '@observatory/service';
import { type Html, html, raw } from './html.ts';

export interface PageShell {
  title: string;
  /** Short summary for <meta name="description">. */
  description?: string;
  /** Which nav entry is the current page. */
  current?: 'dashboard' | 'servers' | 'coverage';
  /** The search box in the header keeps what was searched. */
  query?: string;
  body: Html;
  operator: string;
  region: string;
}

/** Pages carry no script at all; styles and images come from us only. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
} as const;

const LOGO = raw(
  '<svg class="brand-mark" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="10" fill="none" stroke="#4ac26b" stroke-width="2.5"/><path d="M7 12.5l3.2 3.2L17 9" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/></svg>',
);

/** The same mark on a dark tile, for browser tabs. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="5" fill="#24292f"/><circle cx="12" cy="12" r="8.5" fill="none" stroke="#4ac26b" stroke-width="2.2"/><path d="M8 12.4l2.8 2.8L16.2 9.6" fill="none" stroke="#fff" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"/></svg>';

function navLink(href: string, label: string, current: boolean): Html {
  return html`<li><a href="${href}"${current ? raw(' aria-current="page"') : ''}>${label}</a></li>`;
}

/** The document around every page: landmarks, skip link, header with search, footer. */
export function renderPage(shell: PageShell): string {
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${shell.title}</title>
<meta name="description" content="${shell.description ?? 'Runtime trust verdicts, uptime and latency for MCP servers, measured with real MCP handshakes.'}">
<link rel="stylesheet" href="/assets/observatory.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="inner">
    <a class="brand" href="/">${LOGO}<span>${SERVICE_NAME}</span></a>
    <nav class="site-nav" aria-label="Main">
      <ul>
        ${navLink('/', 'Dashboard', shell.current === 'dashboard')}
        ${navLink('/servers', 'Servers', shell.current === 'servers')}
        ${navLink('/atlas/report', 'Coverage', shell.current === 'coverage')}
        ${navLink('/docs', 'API', false)}
      </ul>
    </nav>
    <form class="header-search" role="search" action="/servers" method="get">
      <label class="visually-hidden" for="header-q">Search servers</label>
      <input id="header-q" type="search" name="q" value="${shell.query ?? ''}" placeholder="Name, slug or URL" maxlength="200">
      <button type="submit">Search</button>
    </form>
  </div>
</header>
<main id="main" class="inner" tabindex="-1">
${shell.body}
</main>
<footer class="site-footer">
  <div class="inner">
    <p>${SERVICE_NAME} ${SERVICE_VERSION} · operated by ${shell.operator} · region ${shell.region}</p>
    <p>Every figure here was measured: real MCP handshakes by our probes and outcomes reported by agents. Where there is no evidence, the page says so. <a href="/api/info">Service info</a> · <a href="/agent-onboarding/SKILL.md">For agents</a> · <a href="/openapi.json">OpenAPI</a></p>
  </div>
</footer>
</body>
</html>`}`;
}
