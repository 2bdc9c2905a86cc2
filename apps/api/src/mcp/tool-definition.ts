import { getParseErrorMessage, safeParseAsync } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { HttpProblem, MCP_TOOLS, type Services } from '@observatory/service';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import { notePassed, passedBefore, sharedResult } from './shared-answers.ts';

export type McpToolName = (typeof MCP_TOOLS)[number]['name'];

/**
 * A schema's type without the index signatures that loose objects add, so that service
 * results typed by interfaces check against the output schema member by member.
 */
type Declared<T> = T extends readonly (infer Item)[]
  ? Declared<Item>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Declared<T[K]> }
    : T;

/** What a tool may use: the shared service layer (never its own logic) and the request's logger. */
export interface ToolContext {
  services: Services;
  log: FastifyBaseLogger;
}

/**
 * One MCP tool: its schemas (zod, shown to agents as JSON Schema), honest annotations, and a
 * `run` that asks the service layer. `run` returns the structured result, or throws an
 * HttpProblem (bad input, unknown server, refusal) that reaches the agent as an isError result.
 */
export interface ToolDefinition<In extends z.ZodObject = z.ZodObject, Out extends z.ZodObject = z.ZodObject> {
  name: McpToolName;
  title: string;
  /** Said after the one-line purpose from MCP_TOOLS: when to call it, what comes back. */
  guidance: string;
  inputSchema: In;
  outputSchema: Out;
  annotations: ToolAnnotations;
  run(args: z.output<In>, context: ToolContext): Promise<Declared<z.input<Out>>>;
}

/** Keeps each tool file fully typed while the registry holds them side by side. */
export function defineTool<In extends z.ZodObject, Out extends z.ZodObject>(
  tool: ToolDefinition<In, Out>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** The description an agent reads: the purpose listed at /api/info, then how to use the tool. */
export function describeTool(tool: ToolDefinition): string {
  const listed = MCP_TOOLS.find((t) => t.name === tool.name);
  return [listed?.description, tool.guidance].filter(Boolean).join(' ');
}

/** A successful result: the structured content, and the same JSON as text for clients that only read text. */
export function toolResult(structured: Record<string, unknown>): CallToolResult {
  return (
    sharedResult(structured) ?? {
      content: [{ type: 'text', text: JSON.stringify(structured) }],
      structuredContent: structured,
    }
  );
}

/** An error the agent can act on. No structuredContent: clients check it against the output schema. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * Runs a tool. A problem raised on purpose (HttpProblem) becomes its detail, with the fields
 * at fault; anything else is logged and answered without internals, as the REST API does.
 */
export async function runTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<CallToolResult> {
  try {
    const structured = (await tool.run(args, context)) as Record<string, unknown>;
    const invalid = await outputProblem(tool, structured);
    if (invalid) {
      context.log.error({ tool: tool.name, problem: invalid }, 'MCP tool answered outside its output schema');
      return toolError(invalid);
    }
    return toolResult(structured);
  } catch (error) {
    if (error instanceof HttpProblem) return toolError(problemMessage(error));
    context.log.error({ err: error, tool: tool.name }, 'MCP tool failed');
    return toolError('Something went wrong on our side; it has been logged. Retry shortly.');
  }
}

/**
 * The check McpServer makes of structuredContent against the tool's output schema (same parse,
 * same message), done here instead so that an answer shared between calls is checked once:
 * createMcpServer registers the tools without their output schema.
 */
async function outputProblem(tool: ToolDefinition, structured: Record<string, unknown>) {
  if (passedBefore(structured, tool.outputSchema)) return undefined;
  const parsed = await safeParseAsync(tool.outputSchema, structured);
  if (!parsed.success) {
    return new McpError(
      ErrorCode.InvalidParams,
      `Output validation error: Invalid structured content for tool ${tool.name}: ${getParseErrorMessage(parsed.error)}`,
    ).message;
  }
  notePassed(structured, tool.outputSchema);
  return undefined;
}

function problemMessage(problem: HttpProblem): string {
  const text = problem.detail ?? problem.title;
  const errors = problem.extra.errors;
  if (!Array.isArray(errors) || errors.length === 0) return text;
  const fields = errors
    .map((e: { field?: unknown; message?: unknown }) => `${String(e.field)}: ${String(e.message)}`)
    .join('; ');
  return text.includes(fields) ? text : `${text} (${fields})`;
}
