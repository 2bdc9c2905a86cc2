import { registerSchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';

export const registerServerTool = defineTool({
  name: 'register_server',
  title: 'Register an MCP server',
  guidance:
    'Give the public http(s) URL of its MCP endpoint and a name; description, category and github_url are optional. The first probe runs at once and a trust score forms as probes and reports arrive. Registering a tracked URL again updates its details. Private-network addresses and the observatory itself are refused.',
  inputSchema: registerSchema,
  outputSchema: z.looseObject({
    registered: z.literal(true),
    updated: z.boolean().describe('true when the server was already tracked and its details were updated'),
    server_url: z.string().describe('The normalized URL the observatory tracks'),
    slug: z.string(),
    name: z.string(),
    category: z.string(),
    initial_trust_score: z.number().nullable().describe('null until the first probe is analysed'),
    status_url: z.string(),
    message: z.string(),
  }),
  annotations: {
    readOnlyHint: false,
    // Registering a tracked URL again replaces its name, description and category.
    destructiveHint: true,
    // Same arguments, same record: servers are deduplicated by normalized URL.
    idempotentHint: true,
    // It makes the observatory probe the named server on the internet.
    openWorldHint: true,
  },
  run: (args, { services }) => services.registration.register(args),
});
