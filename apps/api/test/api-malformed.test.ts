import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUnstorableText } from '../src/plugins/input-guard.ts';
import { type ApiHarness, issueKey, listRoutes, type RouteEntry, startApi } from './api-harness.ts';

/**
 * Malformed input against EVERY route, generated: the routes come from the app itself
 * (printRoutes) and their parameters and bodies from /openapi.json, so a route added later is
 * attacked without anyone editing this file. Per route and family of abuse, one test asserting:
 * never a 5xx, and every 4xx is application/problem+json with type, title and status.
 */

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  pattern?: string;
}

interface Operation extends RouteEntry {
  queryParams: string[];
  body: JsonSchema | null;
}

/** A request and how the report names it. */
interface Case {
  label: string;
  request: InjectOptions;
  /** Only this status is acceptable (e.g. 413 for a body over the limit). */
  expectStatus?: number;
}

/** The MCP endpoint answers in JSON-RPC, whose error objects are its clients' contract. */
const JSON_RPC_ROUTES = new Set(['/mcp']);

/** Query parameters tried on GET routes that document none (pages read some without documenting them). */
const GENERIC_QUERY = ['q', 'limit'];

// ---------------------------------------------------------------------------------------------
// The catalogue, read at collection time (so each route gets its own tests) from the app the
// tests then attack. Input handling is the same code in both storage modes, and PGlite is
// Postgres with the same text rules, so the attack runs once, in distributed mode.

async function readCatalogue(h: ApiHarness): Promise<Operation[]> {
  const spec = (await h.app.inject('/openapi.json')).json() as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: Array<{ in: string; name: string }>;
          requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        }
      >
    >;
  };
  const documented = new Map<string, Omit<Operation, 'method' | 'path'>>();
  for (const [openApiPath, operations] of Object.entries(spec.paths)) {
    const path = openApiPath.replace(/\{\*\}/g, '*').replace(/\{(\w+)\}/g, ':$1');
    for (const [method, op] of Object.entries(operations)) {
      documented.set(`${method.toUpperCase()} ${path}`, {
        queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
      });
    }
  }
  return listRoutes(h.app).map((r) => ({
    ...r,
    ...(documented.get(`${r.method} ${r.path}`) ?? { queryParams: [], body: null }),
  }));
}

const h = await startApi({ database: 'postgres', redis: true });
const catalogue = await readCatalogue(h);
afterAll(async () => {
  await h.close();
});

// ---------------------------------------------------------------------------------------------
// Values. "raw" values are already percent-encoded (or deliberately broken) query/path text.

const WRONG_VALUES = ['', '-1', '1e309', 'NaN', '1000000000000', '1.5', 'null', '[]', ' 7 ', '٣'];
const RAW_UNICODE = [
  '%ED%A0%80', // a lone surrogate, UTF-8 encoded (so: invalid UTF-8)
  '%FF',
  '%00',
  '%E2%80%AEevil', // right-to-left override
  '%F0%9F%9A%80',
  '%',
  'http%3A%2F%2Fa.example%2F%ED%A0%80',
  'x'.repeat(5000),
];
const ABSURD_DATES = [
  '0000-00-00',
  '2026-02-30',
  '9999-12-31',
  '-271821-04-20',
  '+275760-09-13',
  '2026-01-01T25:61:61Z',
  'yesterday',
];
/** Tried on an undocumented parameter of every route: it must be ignored or refused cleanly. */
const UNKNOWN_PARAM_VALUES = ['%00', '%ED%A0%80', '1e309'];
const PATH_SEGMENTS = [
  '..%2F..%2Fetc%2Fpasswd',
  '..',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%5C..%5Cwindows%5Cwin.ini',
  '%00',
  '%ED%A0%80',
  '%FF',
  '%E2%80%AEevil',
  '%F0%9F%9A%80',
  '%25',
  '%20',
  'a%2Fb%2Fc',
  'https%3A%2F%2F127.0.0.1%2Fmcp',
  'x'.repeat(3000),
];
const ODD_STRINGS = [
  '\ud800',
  '\udc00',
  '\u0000',
  '\u202eevil',
  '\u200b',
  '🚀',
  'e\u0301',
  '\ufeff',
  '\u2028',
  '\u0085',
  'بحث',
  'Ω'.repeat(1000),
];
const WRONG_JSON_VALUES: unknown[] = [null, 0, -1, 1e308, true, false, 'x', '', [], {}, ['x'], { a: 1 }];
const RAW_JSON_NUMBERS = ['1e309', '-1e309', '-0', '1e-400', '123456789012345678901234567890'];
const BROKEN_JSON = [
  '{',
  '{"a":',
  '[1,',
  'nul',
  '{"a":1}}',
  '{"a":1} trailing',
  '\ufeff{"a":1}',
  "{'a':1}",
  '{"a":NaN}',
  '{"a":01}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '"\\ud800"',
  '',
];
const NON_JSON_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/octet-stream',
  'application/*',
];

// ---------------------------------------------------------------------------------------------
// Case generation.

/** The route's path with its parameters filled in (`*` and `:name`). */
const fill = (path: string, segment: string) => path.replace(/\*|:\w+/g, segment);

/** A plausible valid value for a schema, so that a case breaks one field at a time. */
function sample(schema: JsonSchema | undefined, name: string): unknown {
  if (!schema) return 'x';
  if (schema.anyOf?.[0]) return sample(schema.anyOf[0], name);
  if (schema.enum?.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'object') {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, sample(s, k)]));
  }
  if (type === 'array') return [];
  if (/url/.test(name))
    return name.startsWith('github') ? 'https://github.com/a/b' : 'https://fuzz.example.com/mcp';
  if (schema.pattern?.startsWith('^rcpt_')) return 'rcpt_01J000000000000000000000ZZ';
  return 'fuzz';
}

function bodyFields(schema: JsonSchema | null): Array<[string, JsonSchema]> {
  const root = schema?.anyOf?.[0] ?? schema;
  return Object.entries(root?.properties ?? {});
}

/** The parameters a route is attacked through: its documented ones, else a generic few (GET only). */
function attackedParams(op: Operation): string[] {
  if (op.queryParams.length > 0) return op.queryParams;
  return op.method === 'GET' ? GENERIC_QUERY : [];
}

function queryCase(op: Operation, query: string): Case {
  return {
    label: `?${query.slice(0, 60)}`,
    request: { method: op.method, url: `${fill(op.path, 'example')}?${query}` },
  };
}

/** Each value in each attacked parameter, one at a time (a 400 on one must not hide a 500 on another). */
function queryCases(op: Operation, values: string[], raw: boolean): Case[] {
  return attackedParams(op).flatMap((name) =>
    values.map((value) => queryCase(op, `${name}=${raw ? value : encodeURIComponent(value)}`)),
  );
}

function familiesFor(op: Operation): Record<string, Case[]> {
  const families: Record<string, Case[]> = {
    'query: wrong types and absurd numbers': [
      ...queryCases(op, WRONG_VALUES, false),
      ...attackedParams(op).flatMap((name) =>
        [`${name}=1&${name}=2`, `${name}[a]=1`, name, `${name}=${'9'.repeat(400)}`].map((q) =>
          queryCase(op, q),
        ),
      ),
      ...UNKNOWN_PARAM_VALUES.map((value) => queryCase(op, `zzz=${value}`)),
    ],
    'query: odd unicode': queryCases(op, RAW_UNICODE, true),
    'query: absurd dates': [
      ...queryCases(op, ABSURD_DATES, false),
      ...(op.queryParams.includes('start_date')
        ? ['start_date=2030-01-01&end_date=2020-01-01', 'start_date=0001-01-01&end_date=9999-12-31'].map(
            (q) => queryCase(op, q),
          )
        : []),
    ],
    'path: traversal and odd segments': /\*|:\w+/.test(op.path)
      ? PATH_SEGMENTS.map((segment) => ({
          label: fill(op.path, segment).slice(0, 80),
          request: { method: op.method, url: fill(op.path, segment) },
        }))
      : ['/..%2F..%2Fetc%2Fpasswd', '%00', '/%2e%2e', '/x'.repeat(500)].map((suffix) => ({
          label: `${op.path}${suffix}`.slice(0, 80),
          request: { method: op.method, url: `${op.path}${suffix}` },
        })),
    'headers: hostile Authorization and Accept': [
      { authorization: `Bearer ${'A'.repeat(8000)}` },
      { authorization: 'Bearer mcpt_\u00e9\u00e9' },
      { authorization: 'Bearer' },
      { accept: 'text/html' },
      { accept: 'text/html;q=0.1, application/json;q=0.2, */*;q=0' },
      { accept: 'application/problem+json' },
      { 'accept-language': 'ar' },
    ].map((headers) => ({
      label: JSON.stringify(headers).slice(0, 60),
      request: { method: op.method, url: fill(op.path, 'example'), headers },
    })),
  };
  if (op.method !== 'POST' && op.method !== 'PUT' && op.method !== 'PATCH') return families;

  const json = (payload: string, contentType = 'application/json') => ({
    method: op.method,
    url: fill(op.path, 'example'),
    payload,
    headers: { 'content-type': contentType },
  });
  const valid = (sample(op.body ?? { type: 'object' }, 'body') ?? {}) as Record<string, unknown>;
  const fields = bodyFields(op.body);
  const withField = (name: string, value: unknown) => JSON.stringify({ ...valid, [name]: value });
  const withRawField = (name: string, raw: string) => withField(name, '__RAW__').replace('"__RAW__"', raw);
  const fieldNames = fields.length > 0 ? fields.map(([n]) => n) : ['server_url', 'name'];

  return {
    ...families,
    'body: broken JSON and wrong content types': [
      ...BROKEN_JSON.map((payload) => ({ label: `json ${JSON.stringify(payload)}`, request: json(payload) })),
      ...NON_JSON_TYPES.map((type) => ({ label: type, request: json(JSON.stringify(valid), type) })),
      {
        label: 'no content-type',
        request: { method: op.method, url: fill(op.path, 'example'), payload: Buffer.from('{"a":1}') },
      },
    ],
    'body: wrong types per field': [
      ...[null, 0, 'str', true, [], [{}], {}].map((whole) => ({
        label: `body ${JSON.stringify(whole)}`,
        request: json(JSON.stringify(whole)),
      })),
      ...fieldNames.flatMap((name) => [
        ...WRONG_JSON_VALUES.map((value) => ({
          label: `${name}=${JSON.stringify(value)}`,
          request: json(withField(name, value)),
        })),
        ...RAW_JSON_NUMBERS.map((raw) => ({
          label: `${name}=${raw}`,
          request: json(withRawField(name, raw)),
        })),
      ]),
    ],
    'body: odd unicode per string field': [
      { label: 'NUL key', request: json(JSON.stringify({ ...valid, '\u0000': 1 })) },
      ...fieldNames.flatMap((name) =>
        ODD_STRINGS.map((odd) => ({
          label: `${name} += ${JSON.stringify(odd).slice(0, 20)}`,
          request: json(withField(name, `${typeof valid[name] === 'string' ? valid[name] : ''}${odd}`)),
        })),
      ),
    ],
    'body: over 64 KiB is a 413': [
      JSON.stringify({ ...valid, padding: 'a'.repeat(70_000) }),
      JSON.stringify({ ...valid, [fieldNames[0]!]: 'x'.repeat(70_000) }),
      JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i)),
    ].map((payload, i) => ({ label: `huge #${i}`, request: json(payload), expectStatus: 413 })),
    'body: deeply nested JSON': [
      { label: '20,000 nested arrays', request: json(`${'['.repeat(20_000)}${']'.repeat(20_000)}`) },
      { label: '8,000 nested objects', request: json(`${'{"a":'.repeat(8_000)}1${'}'.repeat(8_000)}`) },
      {
        label: `${fieldNames[0]} = 5,000 nested arrays`,
        request: json(withRawField(fieldNames[0]!, `${'['.repeat(5_000)}${']'.repeat(5_000)}`)),
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Checking.

/** Does this Accept header rank text/html above JSON (q-values honoured)? */
function prefersHtml(accept: unknown): boolean {
  if (typeof accept !== 'string') return false;
  const q = (type: string) =>
    Math.max(
      0,
      ...accept.split(',').flatMap((part) => {
        const [media, ...params] = part.trim().split(';');
        if (media?.trim() !== type) return [];
        const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
        return [qp ? Number(qp.slice(2)) : 1];
      }),
    );
  return q('text/html') > Math.max(q('application/json'), q('application/problem+json'));
}

function violation(route: string, c: Case, res: LightMyRequestResponse): string | null {
  const shown = `${c.label} → ${res.statusCode}`;
  if (c.expectStatus !== undefined && res.statusCode !== c.expectStatus)
    return `${shown}, expected ${c.expectStatus}`;
  if (res.statusCode >= 500) return `${shown}: ${res.body.slice(0, 160)}`;
  if (res.statusCode < 400 || JSON_RPC_ROUTES.has(route)) return null;
  const type = String(res.headers['content-type'] ?? '');
  // HTML pages answer browsers (clients that prefer text/html) with an HTML error page
  if (type.startsWith('text/html') && prefersHtml(c.request.headers?.accept)) return null;
  if (!type.startsWith('application/problem+json'))
    return `${shown} as ${type || 'no content-type'}: ${res.body.slice(0, 120)}`;
  let body: { type?: unknown; title?: unknown; status?: unknown };
  try {
    body = JSON.parse(res.body);
  } catch {
    return `${shown}: problem body is not JSON`;
  }
  if (typeof body.type !== 'string' || typeof body.title !== 'string' || body.status !== res.statusCode) {
    return `${shown}: problem lacks type/title/status: ${res.body.slice(0, 120)}`;
  }
  return null;
}

/**
 * Known bugs, by route and family ("GET /x › family": "cause"): such tests are marked
 * `it.fails` until the bug is fixed. None is open.
 */
const KNOWN_BUGS: Record<string, string> = {};

describe('the route catalogue', () => {
  it('finds the documented routes and every SPEC endpoint', () => {
    const keys = catalogue.map((r) => `${r.method} ${r.path}`);
    for (const route of [
      'POST /agent/auth',
      'GET /agent-query/*',
      'GET /v1/verify-receipt',
      'POST /v1/verify-receipt',
      'GET /api/trust',
      'GET /api/leaderboard',
      'GET /api/servers',
      'GET /api/stats',
      'GET /api/external-agents',
      'POST /api/report',
      'POST /api/register',
      'GET /api/info',
      'GET /atlas/report',
      'GET /get-started',
      'GET /agent-onboarding/SKILL.md',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-authorization-server',
      'GET /health',
      'GET /ready',
    ]) {
      expect(keys).toContain(route);
    }
    // the OpenAPI document supplied the parameters
    expect(catalogue.find((r) => r.path === '/api/leaderboard')?.queryParams).toContain('limit');
    expect(
      bodyFields(catalogue.find((r) => r.path === '/api/report')?.body ?? null).map(([n]) => n),
    ).toContain('latency_ms');
  });
});

describe('malformed input on every route', () => {
  let key: string;
  beforeAll(async () => {
    key = await issueKey(h.app, '198.51.100.60');
  });

  for (const op of catalogue) {
    describe(`${op.method} ${op.path}`, () => {
      for (const [family, cases] of Object.entries(familiesFor(op))) {
        if (cases.length === 0) continue;
        const bug = KNOWN_BUGS[`${op.method} ${op.path} › ${family}`];
        (bug ? it.fails : it)(bug ? `${family} (known bug: ${bug})` : family, async () => {
          const violations: string[] = [];
          // a few at a time: concurrency is part of the abuse, a stampede is not the point here
          for (let i = 0; i < cases.length; i += 24) {
            const answers = await Promise.all(
              cases.slice(i, i + 24).map(async (c) => {
                const headers = {
                  authorization: `Bearer ${key}`,
                  ...(c.request.headers as Record<string, string>),
                };
                const res = await h.app.inject({ ...c.request, headers, remoteAddress: '198.51.100.61' });
                return violation(op.path, c, res);
              }),
            );
            violations.push(...answers.filter((v): v is string => v !== null));
          }
          expect(violations).toEqual([]);
        });
      }
    });
  }
});

describe('the input guard names where unstorable text is', () => {
  it('gives the path of the first value it refuses, and null for input it can store', () => {
    expect(findUnstorableText({ a: [1, 'ok', { b: 'x\u0000' }] })).toBe(
      'a[2].b: must not contain NUL characters',
    );
    expect(findUnstorableText({ a: ['\ud800'] })).toBe('a[0]: must be well-formed Unicode (lone surrogate)');
    expect(findUnstorableText('\u0000')).toBe('input: must not contain NUL characters');
    expect(findUnstorableText({ nested: { 'k\ud800': 1 } })).toBe('nested: a key is not well-formed text');
    expect(findUnstorableText({ a: [1, 2, 3] }, 2)).toBe('a[2]: too many values');
    expect(findUnstorableText({ ok: ['fine', { deep: 'café 🚀' }], n: null, t: true })).toBeNull();
  });
});
