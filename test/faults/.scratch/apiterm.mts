import { startFaultStack, sleep, until, serversProbedSince } from '../fault-stack.ts';
import { LoadGenerator, tally } from '../load-generator.ts';
const patched = process.env.PATCHED === '1';
const stack = await startFaultStack({ servers: 20, env: patched ? { NODE_OPTIONS: '--import /tmp/obs-scratch/pg-redirect.mjs' } : {} });
const [{ proc: api, url }, worker, scheduler] = await Promise.all([stack.spawnApi({ LOG_LEVEL: 'info' }), stack.spawn('worker'), stack.spawn('scheduler')]);
await until(async () => (await serversProbedSince(stack.db, new Date(0))).size === 20, 20000, 'x');
const load = new LoadGenerator({ apiUrl: url, serverUrls: stack.servers.map(s=>s.url), apiKey: await stack.createApiKey(10000), rates: { report: 20, read: 10, query: 5 }, timeoutMs: 3000 }).start();
await sleep(2000);
await stack.pg.stop('immediate'); await sleep(6000); await stack.pg.start();
const trustUrl = `${url}/api/trust?url=${encodeURIComponent(stack.servers[0]!.url)}`;
await until(async () => !api.alive() || (await fetch(trustUrl, { signal: AbortSignal.timeout(1000) })).status === 200, 30000, 'rec').catch(() => {});
await sleep(1000);
await load.stop();
console.log(JSON.stringify(tally(load.ledger)), 'api alive', api.alive());
const before = api.output().length;
const t = Date.now();
const r = await api.stop(20000);
console.log('api stop', JSON.stringify(r), Date.now() - t);
const lines = api.output().slice(before).split('\n').filter(Boolean).map(l => { try { const j = JSON.parse(l); return `${j.time - t} ${j.msg} ${j.err?.message ?? ''} ${j.req?.url ?? ''}`; } catch { return l; } });
console.log(lines.slice(0, 30).join('\n'));
// requests that started but never completed, from pino request logs
const out = api.output().split('\n').filter(Boolean).map(l => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
const incoming = new Map(); for (const j of out) { if (j.msg === 'incoming request') incoming.set(j.reqId, j.req?.url); if (j.msg === 'request completed') incoming.delete(j.reqId); }
console.log('requests never completed:', incoming.size, [...incoming.values()].slice(0, 5));
for (const j of out) if (j.level >= 50) console.log('ERRLOG', j.msg, j.err?.type, j.err?.code, j.err?.message, (j.err?.stack ?? '').split('\n').slice(0, 8).join(' | '));
import('node:fs').then(fs => { const log = fs.readFileSync(stack.pg.logFile, 'utf8'); const blocks = log.split('ERROR:  deadlock detected').slice(1).map(b => b.split('HINT')[0].replace(/\s+/g, ' ').replace(/Process \d+/g, 'P').replace(/FROM jsonb_to_recordset.*?WHERE s.id = u.server_id/g, '…').slice(0, 1500)); console.log('PGLOG deadlocks', blocks.length); for (const b of blocks) console.log('DL', b); });
await sleep(500);
await stack.close();
process.exit(0);
