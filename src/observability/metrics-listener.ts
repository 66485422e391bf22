/**
 * The metrics' own listener (metrics.port, on metrics.host: loopback unless set otherwise), apart
 * from the API port so that scrapes need no key and the API's limits never refuse them. It
 * serves GET /metrics and nothing else.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ParleyMetrics } from './metrics.js';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(metrics: ParleyMetrics, options: { port: number; host: string }): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Only /metrics is served here\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('Method not allowed\n');
      return;
    }
    metrics.scrape().then(
      ({ body, contentType }) => response.writeHead(200, { 'content-type': contentType }).end(request.method === 'HEAD' ? undefined : body),
      (err: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`Collecting the metrics failed: ${err.message}\n`),
    );
  });
  // Scrapers keep connections alive; a short idle timeout keeps shutdown quick.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
