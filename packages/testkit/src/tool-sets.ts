/**
 * The tools a virtual server offers. Version 0 is the stable set; `fleet.changeTools(id)` bumps
 * the version, which rewrites one description and adds a versioned tool, so the tool-list hash
 * changes and drift detection has something to see. The JSON Schemas are written exactly as the
 * SDK's McpServer renders the equivalent zod shapes (draft-07 `$schema`, no empty `required`),
 * so the lean responder and the SDK-built servers list identical tools (a test holds them to it).
 */

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, { type: string; description: string }>;
    required?: string[];
    $schema: string;
  };
  /** What the SDK's McpServer declares for a tool without task support. */
  execution: { taskSupport: 'forbidden' };
}

export function toolSet(version: number): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    {
      name: 'echo',
      description:
        version === 0 ? 'Echoes the message back.' : `Echoes the message back (tool set v${version}).`,
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'Text to echo' } },
        required: ['message'],
        $schema: DRAFT_07,
      },
      execution: { taskSupport: 'forbidden' },
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'number', description: 'First addend' },
          b: { type: 'number', description: 'Second addend' },
        },
        required: ['a', 'b'],
        $schema: DRAFT_07,
      },
      execution: { taskSupport: 'forbidden' },
    },
  ];
  if (version > 0) {
    tools.push({
      name: `release_v${version}`,
      description: `Says which tool set this is (v${version}).`,
      inputSchema: { type: 'object', properties: {}, $schema: DRAFT_07 },
      execution: { taskSupport: 'forbidden' },
    });
  }
  return tools;
}

/** What calling a tool of the set returns, shared by the lean responder and the SDK servers. */
export function callTool(name: string, args: Record<string, unknown>): { text: string; isError: boolean } {
  if (name === 'echo') return { text: String(args.message ?? ''), isError: false };
  if (name === 'add') return { text: String(Number(args.a) + Number(args.b)), isError: false };
  if (/^release_v\d+$/.test(name)) return { text: name, isError: false };
  return { text: `unknown tool ${name}`, isError: true };
}
