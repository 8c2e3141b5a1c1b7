import { Hono } from 'hono';
import * as v from 'valibot';
import type { Deps } from '../../config/runtime.ts';
import { grantAccess, listDatabaseGrants, revokeAccess } from '../../governance/grants.ts';
import type { GrantRow, GrantWithUser } from '../../store/grants.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';
import { actorOf } from './databases.ts';

const CreateGrant = v.object({
  user_id: v.pipe(v.string(), v.regex(/^usr_[0-9A-Z]{26}$/, 'must be a user id')),
});

/**
 * Access grants of restrict_access databases, under /api/v1/desk/databases/:id/grants. Admins
 * only; a database the admin cannot see answers 404 as everywhere else.
 */
export function grantRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Per route rather than `use('*')`: this router shares its prefix with the database routes.
  const auth = authenticate(deps.sql, ['api_key', 'token', 'session']);
  const admin = requireAdmin();

  app.get(
    '/:id/grants',
    doc('Databases', 'List access grants of a restricted database', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    auth,
    admin,
    async (c) => {
      const p = c.get('principal');
      const grants = await listDatabaseGrants(deps.sql, p.orgId, actorOf(p), c.req.param('id'));
      return c.json({ data: grants.map(presentGrant) });
    },
  );
  app.post(
    '/:id/grants',
    doc('Databases', 'Grant a user access to a database', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateGrant,
      status: 201,
    }),
    auth,
    admin,
    async (c) => {
      const body = await jsonBody(c, CreateGrant);
      const p = c.get('principal');
      const { grant, created } = await grantAccess(
        deps.sql,
        p.orgId,
        actorOf(p),
        c.req.param('id'),
        body.user_id,
      );
      return c.json(presentGrant(grant), created ? 201 : 200);
    },
  );
  app.delete(
    '/:id/grants/:user_id',
    doc('Databases', 'Remove an access grant', { auth: ['apiKey', 'bearer', 'session'] }),
    auth,
    admin,
    async (c) => {
      const p = c.get('principal');
      const grant = await revokeAccess(
        deps.sql,
        p.orgId,
        actorOf(p),
        c.req.param('id'),
        c.req.param('user_id'),
      );
      return c.json(presentGrant(grant));
    },
  );
  return app;
}

function presentGrant(g: GrantRow | GrantWithUser) {
  return {
    id: g.id,
    database_id: g.database_id,
    user_id: g.user_id,
    ...('email' in g ? { email: g.email, role: g.role } : {}),
    granted_by: g.granted_by,
    created_at: g.created_at.toISOString(),
  };
}
