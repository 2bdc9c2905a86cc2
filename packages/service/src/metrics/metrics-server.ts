import { createServer, type Server } from 'node:http';
import { enableDefaultMetrics, processRegistry } from './process-metrics.ts';

/**
 * /metrics for processes that serve no API (worker, scheduler in distributed mode): their own
 * counters — probes by outcome and duration, scheduler lag — on METRICS_PORT.
 */
export async function startMetricsServer(
  port: number,
  host: string,
): Promise<{ port: number; close(): Promise<void> }> {
  enableDefaultMetrics();
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      processRegistry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': processRegistry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500).end();
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
