import { HttpProblem } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

/**
 * What no text stored by this service may contain, whatever the route: NUL (Postgres text and
 * JSON refuse it) and lone UTF-16 surrogates (not Unicode; Postgres JSON refuses them too). One
 * check for every body, query and path, so no route can forget it and no such string reaches a
 * batch where it would fail the other rows. The walk is iterative: deep JSON cannot overflow it.
 */
export function findUnstorableText(value: unknown, maxNodes = 100_000): string | null {
  if (allStorable(value, maxNodes)) return null;
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  let seen = 0;
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (++seen > maxNodes) return `${path || 'input'}: too many values`;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return `${path || 'input'}: must not contain NUL characters`;
      if (!v.isWellFormed()) return `${path || 'input'}: must be well-formed Unicode (lone surrogate)`;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], path: `${path}[${i}]` });
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000') || !k.isWellFormed())
          return `${path || 'input'}: a key is not well-formed text`;
        stack.push({ v: child, path: path ? `${path}.${k}` : k });
      }
    }
  }
  return null;
}

const storableText = (text: string) => !text.includes('\u0000') && text.isWellFormed();

/**
 * The same walk without the paths, which nearly every request passes: building a path string
 * for each value cost more than the checks. Only a failing input is walked again for its path.
 */
function allStorable(value: unknown, maxNodes: number): boolean {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object') return true;
  const stack: unknown[] = [value];
  let seen = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (++seen > maxNodes) return false;
    if (typeof v === 'string') {
      if (!storableText(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (!storableText(k)) return false;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return true;
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
