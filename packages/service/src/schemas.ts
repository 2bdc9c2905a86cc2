import { CATEGORIES } from '@observatory/core';
import { z } from 'zod';

/**
 * Input schemas shared by the REST routes and the MCP tools, so both refuse the same input
 * with the same messages. Descriptions are written for agents (they show up in OpenAPI and
 * in MCP tool schemas).
 */

/** True when the text holds a C0 control character other than tab, newline and carriage return, or DEL. */
function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f) return true;
  }
  return false;
}

/** Printable text without control characters, trimmed, bounded. */
export const boundedText = (max: number) =>
  z
    .string()
    .trim()
    .max(max, { error: `must be at most ${max} characters` })
    .refine((s) => !hasControlCharacters(s), { error: 'must not contain control characters' });

export const serverUrlSchema = z
  .string()
  .trim()
  .min(1, { error: 'is required' })
  .max(2048, { error: 'must be at most 2048 characters' })
  .refine((v) => URL.canParse(v), {
    error: 'must be an absolute URL, e.g. https://example.com/mcp',
    abort: true,
  })
  .refine((v) => ['http:', 'https:'].includes(new URL(v).protocol), { error: 'must use http or https' })
  .describe('URL of the MCP server endpoint, e.g. https://example.com/mcp');

/** What an agent may say went wrong (POST /api/report error_type). */
export const REPORT_ERROR_TYPES = [
  'timeout',
  'connection_error',
  'http_error',
  'protocol_error',
  'auth_error',
  'rate_limited',
  'invalid_response',
  'tool_error',
  'other',
] as const;

export const reportSchema = z.object({
  server_url: serverUrlSchema,
  success: z.boolean().describe('Did the call to the server succeed?'),
  latency_ms: z
    .number()
    .min(0)
    .max(600_000)
    .optional()
    .describe('How long the call took, in milliseconds (0-600000)'),
  tool_name: boundedText(200).optional().describe('Name of the tool that was called'),
  error_type: z
    .enum(REPORT_ERROR_TYPES, { error: `must be one of ${REPORT_ERROR_TYPES.join(', ')}` })
    .optional()
    .describe(`Kind of failure: ${REPORT_ERROR_TYPES.join(', ')}`),
  error_message: boundedText(1000).optional().describe('The error message, if any (at most 1000 characters)'),
  http_status: z
    .number()
    .int()
    .min(100)
    .max(599)
    .optional()
    .describe('HTTP status the server answered with (100-599)'),
  agent_id: boundedText(128).min(1).optional().describe('Who is reporting (defaults to "anonymous")'),
});
export type ReportInput = z.infer<typeof reportSchema>;

export const categorySchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((c) => (CATEGORIES as readonly string[]).includes(c), {
    error: `must be one of ${CATEGORIES.join(', ')}`,
  })
  .describe(`Category: ${CATEGORIES.join(', ')}`);

export const registerSchema = z.object({
  server_url: serverUrlSchema,
  name: boundedText(120).min(1, { error: 'is required' }).describe('Display name of the server'),
  description: boundedText(2000).optional().describe('What the server does'),
  category: categorySchema.optional(),
  github_url: z
    .string()
    .trim()
    .max(500)
    .refine((v) => URL.canParse(v) && new URL(v).protocol === 'https:', { error: 'must be an https URL' })
    .optional()
    .describe('Source repository URL'),
});
export type RegisterInput = z.infer<typeof registerSchema>;

const REPORT_FIELDS = new Set([
  'server_url',
  'success',
  'latency_ms',
  'tool_name',
  'error_type',
  'error_message',
  'http_status',
  'agent_id',
]);

/** boundedText(max)'s value for `value`, or undefined where it would refuse it. */
function boundedTextValue(value: unknown, max: number, min = 0): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return text.length >= min && text.length <= max && !hasControlCharacters(text) ? text : undefined;
}

/**
 * reportSchema's value for a body it accepts, worked out without zod: POST /api/report is the
 * busiest write, and zod's walk of this object cost ~11 µs/req of main-thread CPU (profiled),
 * more than the rest of ingesting the report. Gives the same value as reportSchema.parse (same
 * fields, same order, trimmed texts) or undefined whenever it is not sure — a field it does not
 * know, a value of another type, anything out of range — and the caller then asks reportSchema,
 * which also words any refusal. The server URLs it accepted are remembered (at most
 * `urlLimit`): agents report on the same servers over and over, and checking a URL means
 * parsing it twice. Tested against reportSchema on a corpus of edge cases (schemas.test.ts).
 */
export function reportFastPath(urlLimit = 10_000) {
  const acceptedUrls = new Map<string, string>();
  const serverUrl = (raw: unknown): string | undefined => {
    if (typeof raw !== 'string') return undefined;
    const known = acceptedUrls.get(raw);
    if (known !== undefined) return known;
    const checked = serverUrlSchema.safeParse(raw);
    if (!checked.success) return undefined;
    if (acceptedUrls.size >= urlLimit) acceptedUrls.delete(acceptedUrls.keys().next().value as string);
    acceptedUrls.set(raw, checked.data);
    return checked.data;
  };

  function parse(body: unknown): ReportInput | undefined {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const input = body as Record<string, unknown>;
    for (const key in input) if (!REPORT_FIELDS.has(key) || input[key] === undefined) return undefined;
    const server_url = serverUrl(input.server_url);
    if (server_url === undefined || typeof input.success !== 'boolean') return undefined;
    const value: ReportInput = { server_url, success: input.success };
    const { latency_ms, tool_name, error_type, error_message, http_status, agent_id } = input;
    if (latency_ms !== undefined) {
      if (typeof latency_ms !== 'number' || !(latency_ms >= 0 && latency_ms <= 600_000)) return undefined;
      value.latency_ms = latency_ms;
    }
    if (tool_name !== undefined) {
      const text = boundedTextValue(tool_name, 200);
      if (text === undefined) return undefined;
      value.tool_name = text;
    }
    if (error_type !== undefined) {
      if (!(REPORT_ERROR_TYPES as readonly unknown[]).includes(error_type)) return undefined;
      value.error_type = error_type as ReportInput['error_type'];
    }
    if (error_message !== undefined) {
      const text = boundedTextValue(error_message, 1000);
      if (text === undefined) return undefined;
      value.error_message = text;
    }
    if (http_status !== undefined) {
      if (!Number.isInteger(http_status) || (http_status as number) < 100 || (http_status as number) > 599)
        return undefined;
      value.http_status = http_status as number;
    }
    if (agent_id !== undefined) {
      const text = boundedTextValue(agent_id, 128, 1);
      if (text === undefined) return undefined;
      value.agent_id = text;
    }
    return value;
  }

  return {
    parse,
    /** How many server URLs are remembered. */
    get rememberedUrls() {
      return acceptedUrls.size;
    },
  };
}
