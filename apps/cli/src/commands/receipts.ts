import { readFile } from 'node:fs/promises';
import { loadConfigOrExit } from '@observatory/config';
import { type Jwks, rotateKey, verifyReceipt } from '@observatory/receipts';
import { createLogger, createServices, keyStoreFor, openRuntime, verifyAuditLog } from '@observatory/service';
import type { Command } from 'commander';

async function loadJwks(source: string): Promise<Jwks> {
  const text = /^https?:\/\//.test(source)
    ? await (await fetch(source)).text()
    : await readFile(source, 'utf8');
  return JSON.parse(text) as Jwks;
}

/** `observatory keys rotate`, `observatory verify-receipt`, `observatory audit verify`. */
export function registerReceiptCommands(program: Command) {
  program
    .command('keys')
    .description('Manage receipt signing keys')
    .command('rotate')
    .description(
      'Make a new signing key active; retired keys stay in /.well-known/jwks.json so old receipts still verify',
    )
    .action(async () => {
      const config = loadConfigOrExit();
      const runtime = await openRuntime(config, createLogger('warn'));
      try {
        if (config.RECEIPT_SIGNING_JWK) {
          process.stderr.write(
            'RECEIPT_SIGNING_JWK pins the signing key: rotate by changing that variable.\n',
          );
          process.exitCode = 1;
          return;
        }
        const key = await rotateKey(keyStoreFor(runtime));
        process.stdout.write(
          `new signing key ${key.kid} is active; API processes pick it up within a minute\n`,
        );
      } finally {
        await runtime.close();
      }
    });

  program
    .command('verify-receipt')
    .description('Verify a receipt offline against a JWKS (file or URL); exit code 0 when valid')
    .argument('<receipt>', 'the compact JWS, or a receipt id (rcpt_…) with --server to fetch it')
    .requiredOption(
      '--jwks <url|file>',
      'the JWKS to trust, e.g. https://observatory.example/.well-known/jwks.json',
    )
    .option('--server <base url>', 'where to fetch the JWS of a receipt id')
    .action(async (receipt: string, opts: { jwks: string; server?: string }) => {
      let jws = receipt;
      if (/^rcpt_/.test(receipt)) {
        if (!opts.server) throw new Error('a receipt id needs --server to fetch its JWS');
        const answer = (await (
          await fetch(`${opts.server.replace(/\/$/, '')}/v1/verify-receipt?id=${encodeURIComponent(receipt)}`)
        ).json()) as { jws?: string };
        if (!answer.jws) throw new Error(`the server does not know receipt ${receipt}`);
        jws = answer.jws;
      }
      const result = await verifyReceipt(jws, await loadJwks(opts.jwks));
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      process.exitCode = result.valid ? 0 : 1;
    });

  program
    .command('audit')
    .description('Audit log tools')
    .command('verify')
    .description('Recompute every audit leaf and the root, and compare with the latest signed checkpoint')
    .action(async () => {
      const config = loadConfigOrExit();
      const runtime = await openRuntime(config, createLogger('warn'));
      try {
        const services = await createServices(runtime);
        const result = await verifyAuditLog(runtime, services.receipts);
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        process.exitCode = result.valid ? 0 : 1;
      } finally {
        await runtime.close();
      }
    });
}
