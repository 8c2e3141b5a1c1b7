import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import {
  ApiKeyChange,
  ApiKeyInput,
  issueApiKey,
  listOrgApiKeys,
  markApiKeyActAs,
} from '../../identity/api-keys.ts';
import { revokeOrgApiKey } from '../../identity/manage.ts';
import type { ApiKeyListing } from '../../store/api-keys.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { notFound } from '../errors.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The domain's schemas (identity/api-keys.ts): the Organization page's form answers the same errors.
const CreateApiKey = ApiKeyInput;
const UpdateApiKey = ApiKeyChange;

/** API keys of the organization: admins create (the secret is shown once), list and revoke. */
export function apiKeyRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());
  app.post(
    '/',
    doc('API keys', 'Create an API key owned by the caller or by a new service account (shown once)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateApiKey,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, CreateApiKey);
      const { key, secret, owner } = await issueApiKey(deps.sql, c.get('principal'), c.get('actor'), body);
      c.header('cache-control', 'no-store');
      return c.json(
        {
          ...present({
            ...key,
            owner_email: owner.email,
            owner_name: owner.name,
            owner_role: owner.role,
            owner_service_account: owner.service_account,
            owner_disabled: false,
          }),
          key: secret,
        },
        201,
      );
    },
  );
  app.get('/', doc('API keys', 'List API keys', { auth: ['apiKey', 'bearer', 'session'] }), async (c) =>
    c.json({ data: (await listOrgApiKeys(deps.sql, restCaller(c))).map(present) }),
  );
  app.patch(
    '/:id',
    doc('API keys', 'Allow or forbid a key to act for users (super admin in person)', {
      auth: ['bearer', 'session'],
      body: UpdateApiKey,
      status: 204,
    }),
    async (c) => {
      const body = await jsonBody(c, UpdateApiKey);
      await markApiKeyActAs(
        deps.sql,
        c.get('principal'),
        c.get('actor'),
        c.req.param('id'),
        body.act_as_allowed,
      );
      return c.body(null, 204);
    },
  );
  app.delete(
    '/:id',
    doc('API keys', 'Revoke an API key', { auth: ['apiKey', 'bearer', 'session'], status: 204 }),
    async (c) => {
      if (!(await revokeOrgApiKey(deps.sql, restCaller(c), c.req.param('id'))))
        throw notFound('no such API key');
      return c.body(null, 204);
    },
  );
  return app;
}

function present(k: ApiKeyListing) {
  return {
    id: k.id,
    name: k.name,
    created_by: k.created_by,
    // The identity the key carries: a person, or a service account with its own role.
    owner:
      k.owner_user_id === null
        ? null
        : {
            kind: k.owner_service_account ? 'service_account' : 'person',
            user_id: k.owner_user_id,
            ...(k.owner_service_account ? { name: k.owner_name } : { email: k.owner_email }),
            role: k.owner_role,
            disabled: k.owner_disabled === true,
          },
    act_as_allowed: k.act_as_allowed,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}
