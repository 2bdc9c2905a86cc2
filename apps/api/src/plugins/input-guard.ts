import { HttpProblem } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

/**
 * What no text stored by this service may contain, whatever the route: NUL (Postgres text and
 * JSON refuse it) and lone UTF-16 surrogates (not Unicode; Postgres JSON refuses them too). One
 * check for every body, query and path, so no route can forget it and no such string reaches a
 * batch where it would fail the other rows. The walk is iterative: deep JSON cannot overflow it.
 */
export function findUnstorableText(value: unknown, maxNodes = 100_000): string | null {
  // Nearly every input passes: building a path string for each value cost more than the
  // checks, so the paths are made only when walking a failing input again to name the spot.
  return firstUnstorable(value, maxNodes, false) === null ? null : firstUnstorable(value, maxNodes, true);
}

/** The first unstorable text in `value` (with its path when `withPaths`), or null. */
function firstUnstorable(value: unknown, maxNodes: number, withPaths: boolean): string | null {
  const values: unknown[] = [value];
  // beside `values`, only when asked for (`paths?.push(...)` builds no string when unset)
  const paths: string[] | undefined = withPaths ? [''] : undefined;
  let seen = 0;
  while (values.length > 0) {
    const v = values.pop();
    const path = paths?.pop() ?? '';
    if (++seen > maxNodes) return `${path || 'input'}: too many values`;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return `${path || 'input'}: must not contain NUL characters`;
      if (!v.isWellFormed()) return `${path || 'input'}: must be well-formed Unicode (lone surrogate)`;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        values.push(v[i]);
        paths?.push(`${path}[${i}]`);
      }
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (k.includes('\u0000') || !k.isWellFormed())
          return `${path || 'input'}: a key is not well-formed text`;
        values.push((v as Record<string, unknown>)[k]);
        paths?.push(path ? `${path}.${k}` : k);
      }
    }
  }
  return null;
}

function refuse(part: string, value: unknown) {
  const problem = findUnstorableText(value);
  if (!problem) return undefined;
  return new HttpProblem(400, 'Bad Request', `${part}.${problem}`, {
    errors: [{ field: `${part}.${problem.split(':')[0]}`, message: problem.split(': ').slice(1).join(': ') }],
  });
}

export function registerInputGuard(app: FastifyInstance) {
  // a callback hook, not an async one: it runs on every request and rarely has anything to say
  app.addHook('preValidation', (request, _reply, done) => {
    done(
      refuse('params', request.params) ??
        refuse('querystring', request.query) ??
        refuse('body', request.body),
    );
  });
}
