import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import {
  ListToolsRequestSchema,
  type ListToolsResult,
  type RequestId,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { SERVICE_NAME, SERVICE_VERSION } from '@observatory/service';
import { constantResult } from './shared-answers.ts';
import { describeTool, runTool, type ToolContext, type ToolDefinition } from './tool-definition.ts';

const INSTRUCTIONS = [
  'MCP Trust Observatory: runtime trust verdicts for MCP servers, from real MCP handshake probes and agent reports.',
  'Before calling an MCP server you have not used recently, call check_trust with its URL; after calling it, call report_interaction with the outcome (free).',
  'Use register_server to have a new server tracked, get_leaderboard to find reliable servers, check_anomaly and get_server_history to look closer.',
].join(' ');

/**
 * One JSON Schema validator for every server. The SDK's Server makes a new Ajv instance when
 * none is given (~0.3 ms, most of the cost of a server per request); it only uses it for
 * elicitation, which these tools never request, so sharing it is safe.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

interface ToolConfig {
  title: string;
  description: string;
  inputSchema: ToolDefinition['inputSchema'];
  outputSchema: ToolDefinition['outputSchema'];
  annotations: ToolAnnotations;
}

/**
 * The tools as McpServer.registerTool takes them, and their tools/list answer, prepared once.
 * McpServer converts every zod schema to JSON Schema on every tools/list (~3 ms for ten tools),
 * and building descriptions per server would allocate for nothing: servers made per request
 * only reuse what is here. The listing is built the way McpServer builds it (the SDK's
 * converter, same options; a test compares the two).
 */
export interface ToolRegistry {
  configs: ReadonlyArray<{ tool: ToolDefinition; config: ToolConfig }>;
  listing: ListToolsResult;
}

export function createToolRegistry(tools: readonly ToolDefinition[]): ToolRegistry {
  const configs = tools.map((tool) => ({
    tool,
    config: {
      title: tool.title,
      description: describeTool(tool),
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: { title: tool.title, ...tool.annotations },
    },
  }));
  const listing = {
    tools: configs.map(({ tool, config }) => ({
      name: tool.name,
      title: config.title,
      description: config.description,
      inputSchema: toJsonSchemaCompat(tool.inputSchema, { strictUnions: true, pipeStrategy: 'input' }),
      annotations: config.annotations,
      execution: { taskSupport: 'forbidden' },
      outputSchema: toJsonSchemaCompat(tool.outputSchema, { strictUnions: true, pipeStrategy: 'output' }),
    })),
  } as ListToolsResult;
  // its JSON is made once too: the listing is the same object in every tools/list response
  return { configs, listing: constantResult(listing) };
}

/** Which context (services, logger) serves a tool call: per server, or per exchange on a shared one. */
export type ContextOf = (extra: { requestId: RequestId }) => ToolContext;

/**
 * An MCP server exposing the registry's tools over the shared service layer, cheap enough to
 * make per stateless request: schemas and descriptions come prepared, the validator is shared
 * and tools/list is answered from the prepared listing (`cachedToolList: false` leaves the
 * SDK's own tools/list in place, for comparison; the tools then keep their output schema in the
 * SDK too, which the listing shows).
 */
export function createMcpServer(
  registry: ToolRegistry,
  contextOf: ContextOf,
  options: { cachedToolList?: boolean } = {},
): McpServer {
  const server = new McpServer(
    { name: 'mcp-trust-observatory', title: SERVICE_NAME, version: SERVICE_VERSION },
    { instructions: INSTRUCTIONS, jsonSchemaValidator },
  );
  const sdkListing = options.cachedToolList === false;
  for (const { tool, config } of registry.configs) {
    // runTool checks the output against the schema (once per shared answer); McpServer would
    // check it again on every call. Only a server listing its tools itself needs the schema.
    const registered = sdkListing ? config : { ...config, outputSchema: undefined };
    server.registerTool(tool.name, registered, (args: Record<string, unknown>, extra) =>
      runTool(tool, args, contextOf(extra)),
    );
  }
  if (!sdkListing) {
    // Replaces the handler registerTool installed; tools/call (validation, isError) stays the SDK's.
    server.server.setRequestHandler(ListToolsRequestSchema, () => registry.listing);
  }
  return server;
}
