import type { Runtime, Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';

export interface ApiServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** Builds the app and listens on HOST:PORT. close() stops taking requests and drains. */
export async function startApiServer(runtime: Runtime, services?: Services): Promise<ApiServer> {
  const app = await buildApp(runtime, services ? { services } : {});
  const address = await app.listen({ host: runtime.config.HOST, port: runtime.config.PORT });
  const port = new URL(address).port;
  const shownHost = ['0.0.0.0', '::'].includes(runtime.config.HOST) ? 'localhost' : runtime.config.HOST;
  return {
    app,
    url: `http://${shownHost}:${port}`,
    close: () => app.close(),
  };
}
