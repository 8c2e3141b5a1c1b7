import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import type { AppEnv } from '../env.ts';
import { authenticate } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';

/** Who the credentials belong to: useful to clients and the simplest authenticated route. */
export function meRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']));
  app.get(
    '/',
    doc('Identity', 'Who the credentials belong to', { auth: ['apiKey', 'bearer', 'session'] }),
    (c) => {
      const p = c.get('principal');
      // An API key is its owner (or the person it acts for): it answers with their identity.
      return c.json({
        // A key's own answer keeps its kind; the fields beside it say whose identity it carries.
        kind: p.via === 'api_key' && !p.actedBy ? 'api_key' : 'user',
        organization_id: p.orgId,
        user_id: p.userId,
        email: p.email,
        role: p.role,
        via: p.via,
        ...(p.serviceAccount ? { service_account: true } : {}),
        ...(p.via === 'api_key' ? { api_key_id: p.credentialId } : {}),
        ...(p.actedBy
          ? { acted_by: { api_key_id: p.actedBy.apiKeyId, owner_user_id: p.actedBy.ownerUserId } }
          : {}),
        // Pages' scripts read it to send x-csrf-token; no CORS here, so other sites cannot.
        ...(p.via === 'session' ? { csrf_token: c.get('csrfToken') } : {}),
      });
    },
  );
  return app;
}
