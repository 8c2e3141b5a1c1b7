import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { AgentInput, listAgents, registerAgent, revokeAgent } from '../../registry/agents.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { jsonBody } from '../validate.ts';

// The domain's schema (registry/agents.ts): the Organization page's form answers the same errors.
const RegisterAgent = AgentInput;

/** Agents of the organization, under /api/v1/agents (agent/README.md): admins only. */
export function agentRoutes(deps: Pick<Deps, 'sql' | 'agents'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());
  app.post('/', async (c) => {
    const body = await jsonBody(c, RegisterAgent);
    const { agent, token } = await registerAgent(deps, restCaller(c), body.name);
    // The token is shown once (STYLE.md 8: responses carrying tokens are not cached).
    c.header('cache-control', 'no-store');
    return c.json({ ...agent, token }, 201);
  });
  app.get('/', async (c) => c.json({ data: await listAgents(deps, c.get('principal').orgId) }));
  app.delete('/:id', async (c) => {
    await revokeAgent(deps, restCaller(c), c.req.param('id'));
    return c.body(null, 204);
  });
  return app;
}
