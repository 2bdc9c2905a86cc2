export * from './app.ts';
export * from './server.ts';
