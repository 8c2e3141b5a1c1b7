import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { AiClientLimitsInput, listAiClients, setAiClientControl } from '../../governance/ai-clients.ts';
import type { OrgAiClient } from '../../store/ai-clients.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The domain's schema (governance/ai-clients.ts): the Organization page's form answers the same errors.
const Limits = AiClientLimitsInput;

/** Connected AI clients of the organization and their limits, admins only. */
export function aiClientRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());
  app.get('/', doc('AI clients', 'List the AI clients people connected, with their limits'), async (c) =>
    c.json({ data: (await listAiClients(deps.sql, restCaller(c))).map(present) }),
  );
  app.put(
    '/:clientId',
    doc('AI clients', 'Limit or disable an AI client for the organization', { body: Limits }),
    async (c) => {
      const body = await jsonBody(c, Limits);
      const row = await setAiClientControl(deps.sql, restCaller(c), c.req.param('clientId'), body);
      return c.json({ client_id: row.client_id, disabled: row.disabled, database_ids: row.database_ids });
    },
  );
  return app;
}

function present(x: OrgAiClient) {
  return {
    client_id: x.client_id,
    client_name: x.client_name,
    kind: x.kind,
    people: x.people,
    last_used_at: x.last_used_at?.toISOString() ?? null,
    disabled: x.disabled,
    database_ids: x.database_ids,
  };
}
