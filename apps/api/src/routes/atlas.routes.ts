import type { Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import { escapeHtml, wantsHtml } from './discovery.routes.ts';

export function atlasRoutes(app: FastifyInstance, services: Services) {
  app.get(
    '/atlas/report',
    {
      schema: {
        tags: ['servers'],
        summary: 'Coverage: indexed, with a behavioural record, verifiable at runtime (JSON or HTML)',
      },
    },
    async (request, reply) => {
      const report = await services.directory.atlas();
      if (!wantsHtml(request.headers.accept)) return report;
      const rows = report.categories
        .map(
          (c) =>
            `<tr><th scope="row">${escapeHtml(c.category)}</th><td>${c.indexed}</td><td>${c.with_behavioural_record} (${c.with_behavioural_record_pct}%)</td><td>${c.verifiable_at_runtime} (${c.verifiable_at_runtime_pct}%)</td></tr>`,
        )
        .join('\n');
      return reply
        .type('text/html; charset=utf-8')
        .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Coverage report</title></head>
<body><main><h1>Coverage report</h1>
<p>Of ${report.totals.indexed} servers indexed, ${report.totals.with_behavioural_record} (${report.totals.with_behavioural_record_pct}%) have a behavioural record and ${report.totals.verifiable_at_runtime} (${report.totals.verifiable_at_runtime_pct}%) answered an MCP handshake in the last 24 hours.</p>
<table><caption>Per category</caption><thead><tr><th scope="col">Category</th><th scope="col">Indexed</th><th scope="col">With a record</th><th scope="col">Verifiable (24 h)</th></tr></thead>
<tbody>${rows}</tbody></table><p>Generated ${escapeHtml(report.generated_at)}.</p></main></body></html>`);
    },
  );
}
