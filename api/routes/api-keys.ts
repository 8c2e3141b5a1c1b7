import { Hono } from 'hono';
import * as v from 'valibot';
import type { Deps } from '../../core/deps.ts';
import { createApiKey, revokeOrgApiKey } from '../../identity/manage.ts';
import { type ApiKeyRow, listApiKeys } from '../../store/api-keys.ts';
import type { AppEnv } from '../env.ts';
import { notFound } from '../errors.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

const CreateApiKey = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200)),
});

/** API keys of the organization: admins create (the secret is shown once), list and revoke. */
export function apiKeyRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());
  app.post(
    '/',
    doc('API keys', 'Create an organization API key (shown once)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateApiKey,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, CreateApiKey);
      const p = c.get('principal');
      const { key, secret } = await createApiKey(deps.sql, {
        orgId: p.orgId,
        name: body.name,
        createdBy: p.kind === 'user' ? p.userId : null,
      });
      c.header('cache-control', 'no-store');
      return c.json({ ...present(key), key: secret }, 201);
    },
  );
  app.get('/', doc('API keys', 'List API keys', { auth: ['apiKey', 'bearer', 'session'] }), async (c) =>
    c.json({ data: (await listApiKeys(deps.sql, c.get('principal').orgId)).map(present) }),
  );
  app.delete(
    '/:id',
    doc('API keys', 'Revoke an API key', { auth: ['apiKey', 'bearer', 'session'], status: 204 }),
    async (c) => {
      if (!(await revokeOrgApiKey(deps.sql, c.get('principal').orgId, c.req.param('id'))))
        throw notFound('no such API key');
      return c.body(null, 204);
    },
  );
  return app;
}

function present(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    created_by: k.created_by,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}
