import { normalizeCategory } from '@observatory/core';
import { HttpProblem } from '../problem.ts';
import type { Runtime } from '../runtime.ts';
import type { RegisterInput } from '../schemas.ts';
import type { ServerResolver } from './server-resolver.ts';

export interface RegistrationResult {
  registered: true;
  updated: boolean;
  server_url: string;
  slug: string;
  name: string;
  category: string;
  /** No evidence yet for a new server: null until its first probe is analysed. */
  initial_trust_score: number | null;
  status_url: string;
  message: string;
}

/**
 * POST /api/register and the register_server tool: dedupe by normalized URL (a second
 * registration updates, `updated: true`), refuse our own URL and non-public targets, and make
 * the server due for a probe at once.
 */
export function registrationService(runtime: Runtime, servers: ServerResolver) {
  const ownOrigin = new URL(runtime.config.publicBaseUrl).origin;

  return {
    async register(input: RegisterInput): Promise<RegistrationResult> {
      const url = servers.normalize(input.server_url);
      if (new URL(url).origin === ownOrigin) {
        throw new HttpProblem(
          422,
          'Target Not Allowed',
          'The observatory does not register or probe itself.',
          {
            errors: [{ field: 'server_url', message: 'is the observatory’s own URL' }],
            reason_code: 'self_registration',
          },
        );
      }
      await servers.assertProbeable(url);
      const { server, created } = await runtime.repos.servers.upsert({
        url,
        name: input.name,
        description: input.description ?? null,
        category: normalizeCategory(input.category),
        github_url: input.github_url ?? null,
        source: 'registered',
      });
      servers.remember(url, server.id);
      if (!created) await runtime.repos.servers.probeSoon(server.id);
      await runtime.repos.audit.append([
        {
          event_id: `evt_reg_${server.id}_${Date.now().toString(36)}`,
          event_type: 'registration',
          occurred_at: new Date(),
          server_id: server.id,
          agent_id: null,
          key_id: null,
          receipt_id: null,
          payload: { server_url: server.url, name: server.name, category: server.category, created },
        },
      ]);
      return {
        registered: true,
        updated: !created,
        server_url: server.url,
        slug: server.slug,
        name: server.name,
        category: server.category,
        initial_trust_score: null,
        status_url: `${runtime.config.publicBaseUrl}/servers/${server.slug}`,
        message: created
          ? 'Registered. The first probe runs now; a trust score forms as probes and reports arrive.'
          : 'Already tracked: details updated and a fresh probe scheduled.',
      };
    },
  };
}

export type RegistrationService = ReturnType<typeof registrationService>;
