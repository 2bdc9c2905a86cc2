#!/usr/bin/env -S npx tsx
import { startApiServer } from '@observatory/api-app';
import { loadConfigOrExit } from '@observatory/config';
import { migrate, openDatabase } from '@observatory/db';
import { startScheduler } from '@observatory/scheduler-app';
import { createServices } from '@observatory/service';
import { startWorker } from '@observatory/worker-app';
import { Command } from 'commander';
import { registerDemoCommand } from './commands/demo.ts';
import { registerImportCommand } from './commands/import.ts';
import { registerReceiptCommands } from './commands/receipts.ts';
import { describeStorage, requireDistributed, runService, serveMetrics } from './lifecycle.ts';

const program = new Command();
program
  .name('observatory')
  .description('MCP Trust Observatory: probes MCP servers, scores them, signs receipts.')
  .version('1.0.0');

program
  .command('start')
  .description(
    'Run api + scheduler + worker in one process (embedded Postgres and in-process jobs unless configured)',
  )
  .action(() =>
    runService(
      'observatory',
      async (runtime) => {
        const services = await createServices(runtime);
        await startWorker(services);
        const scheduler = startScheduler(runtime);
        const api = await startApiServer(runtime, services);
        process.stdout.write(`MCP Trust Observatory listening on ${api.url}\n${describeStorage(runtime)}\n`);
        return [() => scheduler.close(), () => api.close()];
      },
      { servesRequests: true },
    ),
  );

program
  .command('api')
  .description('Run only the HTTP API (scale out behind a load balancer)')
  .action(() =>
    runService(
      'observatory-api',
      async (runtime) => {
        const api = await startApiServer(runtime);
        process.stdout.write(`observatory api listening on ${api.url}\n${describeStorage(runtime)}\n`);
        return [() => api.close()];
      },
      { servesRequests: true },
    ),
  );

program
  .command('worker')
  .description('Run only a probe worker (needs DATABASE_URL and REDIS_URL; scale on queue depth)')
  .action(() =>
    runService(
      'observatory-worker',
      async (runtime) => {
        await startWorker(await createServices(runtime));
        const metrics = await serveMetrics(runtime);
        process.stdout.write(`observatory worker running\n${describeStorage(runtime)}\n`);
        return metrics;
      },
      { check: requireDistributed },
    ),
  );

program
  .command('scheduler')
  .description('Run only the scheduler (needs DATABASE_URL and REDIS_URL; duplicates are harmless)')
  .action(() =>
    runService(
      'observatory-scheduler',
      async (runtime) => {
        const scheduler = startScheduler(runtime);
        const metrics = await serveMetrics(runtime);
        process.stdout.write(`observatory scheduler running\n${describeStorage(runtime)}\n`);
        return [() => scheduler.close(), ...metrics];
      },
      { check: requireDistributed },
    ),
  );

program
  .command('migrate')
  .description('Apply database migrations and exit')
  .action(async () => {
    const config = loadConfigOrExit();
    const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
    try {
      const report = await migrate(db.sql);
      process.stdout.write(
        report.applied.length
          ? `applied: ${report.applied.join(', ')}\n`
          : `up to date (${report.alreadyApplied} migrations applied before)\n`,
      );
    } finally {
      await db.close();
    }
  });

registerReceiptCommands(program);

registerImportCommand(program);
registerDemoCommand(program);

await program.parseAsync(process.argv);
