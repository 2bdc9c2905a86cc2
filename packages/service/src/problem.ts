/**
 * An RFC 9457 problem that a service raises on purpose (bad input, unknown key, quota used up).
 * The HTTP layer answers it as application/problem+json; the MCP layer as a tool error.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    /** Extra members (e.g. `errors` for validation, `retry_after`), sent as they are. */
    readonly extra: Record<string, unknown> = {},
    /** Headers the HTTP answer must carry (WWW-Authenticate, Retry-After, Link). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
    this.name = 'HttpProblem';
  }

  /** For frameworks that read an HTTP status off errors (Fastify, the MCP route). */
  get statusCode(): number {
    return this.status;
  }

  /** The problem type: a relative URI, one stable slug per title, documented at /problems/<slug>. */
  get type(): string {
    return `/problems/${this.title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}`;
  }

  toJSON(instance?: string) {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      ...(this.detail ? { detail: this.detail } : {}),
      ...(instance ? { instance } : {}),
      ...this.extra,
    };
  }
}

export const problems = {
  badRequest: (detail: string, errors?: Array<{ field: string; message: string }>) =>
    new HttpProblem(400, 'Bad Request', detail, errors ? { errors } : {}),
  notFound: (detail: string) => new HttpProblem(404, 'Not Found', detail),
  unavailable: (detail: string, retryAfterSeconds = 5) =>
    new HttpProblem(
      503,
      'Service Unavailable',
      detail,
      { retry_after: retryAfterSeconds },
      {
        'retry-after': String(retryAfterSeconds),
      },
    ),
};
