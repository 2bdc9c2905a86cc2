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
