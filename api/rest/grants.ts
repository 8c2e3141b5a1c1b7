import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import {
  CredentialGrantInput,
  GrantInput,
  grantAccess,
  grantCredential,
  listCredentialAccess,
  listDatabaseGrants,
  revokeAccess,
  revokeCredentialGrant,
} from '../../registry/grants.ts';
import type { CredentialGrantRow, GrantRow, GrantWithUser } from '../../store/grants.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The domain's schemas (registry/grants.ts): the database page's forms answer the same errors.
const CreateGrant = GrantInput;
const CreateCredentialGrant = CredentialGrantInput;

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
      const grants = await listDatabaseGrants(deps.sql, restCaller(c), c.req.param('id'));
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
      const { grant, created } = await grantAccess(deps.sql, restCaller(c), c.req.param('id'), body);
      return c.json(presentGrant(grant), created ? 201 : 200);
    },
  );
  app.delete(
    '/:id/grants/:user_id',
    doc('Databases', 'Remove an access grant', { auth: ['apiKey', 'bearer', 'session'] }),
    auth,
    admin,
    async (c) => {
      const grant = await revokeAccess(deps.sql, restCaller(c), c.req.param('id'), c.req.param('user_id'));
      return c.json(presentGrant(grant));
    },
  );

  // Per-credential access: a credential with restrict_access is usable only by the
  // users and roles granted here; to anyone else it answers 404 like a missing one.
  const credentialPath = '/:id/credentials/:credentialId/grants';
  const target = (c: { req: { param(name: string): string } }) => ({
    databaseId: c.req.param('id'),
    credentialId: c.req.param('credentialId'),
  });
  app.get(
    credentialPath,
    doc('Databases', 'List who may use a credential', { auth: ['apiKey', 'bearer', 'session'] }),
    auth,
    admin,
    async (c) => {
      const t = target(c);
      const access = await listCredentialAccess(deps.sql, restCaller(c), t.databaseId, t.credentialId);
      return c.json({ restrict_access: access.restricted, data: access.grants.map(presentCredentialGrant) });
    },
  );
  app.post(
    credentialPath,
    doc('Databases', 'Let a user or a role use a restricted credential', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateCredentialGrant,
      status: 201,
    }),
    auth,
    admin,
    async (c) => {
      const body = await jsonBody(c, CreateCredentialGrant);
      const { grant, created } = await grantCredential(deps.sql, restCaller(c), target(c), body);
      return c.json(presentCredentialGrant(grant), created ? 201 : 200);
    },
  );
  app.delete(
    `${credentialPath}/:grantId`,
    doc('Databases', 'Remove a credential grant', { auth: ['apiKey', 'bearer', 'session'] }),
    auth,
    admin,
    async (c) => {
      const grant = await revokeCredentialGrant(deps.sql, restCaller(c), target(c), c.req.param('grantId'));
      return c.json(presentCredentialGrant(grant));
    },
  );
  return app;
}

function presentCredentialGrant(g: CredentialGrantRow) {
  return {
    id: g.id,
    credential_id: g.credential_id,
    user_id: g.user_id,
    role: g.role,
    granted_by: g.granted_by,
    created_at: g.created_at.toISOString(),
  };
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
