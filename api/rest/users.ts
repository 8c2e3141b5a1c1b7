import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { findPerson, listPeople } from '../../identity/directory.ts';
import {
  deletePerson,
  InviteInput,
  invitePerson,
  PersonChange,
  passwordLink,
  updatePerson,
} from '../../identity/people.ts';
import type { UserRow } from '../../store/users.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { notFound } from '../errors.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The schemas are the domain's (identity/people.ts): the People page's form answers the same errors.
const Invite = InviteInput;
const Update = PersonChange;

/**
 * People of the organization, under /api/v1/users. Admins invite (the one-time
 * set-password link is in the response once), change roles, disable, enable and delete; admins
 * manage members and admins, super admins everyone. The last active super admin stays.
 */
export function userRoutes(deps: Pick<Deps, 'sql' | 'config'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());

  app.get('/', doc('People', 'List the people of the organization'), async (c) =>
    c.json({ data: (await listPeople(deps.sql, restCaller(c))).map(presentUser) }),
  );
  app.post(
    '/',
    doc('People', 'Invite a person; the response carries their one-time set-password link', {
      body: Invite,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, Invite);
      const { user, link } = await invitePerson(deps.sql, deps.config.baseUrl, restCaller(c), body);
      c.header('cache-control', 'no-store');
      return c.json({ ...presentUser(user), ...presentLink(link) }, 201);
    },
  );
  app.get('/:id', doc('People', 'Get a person'), async (c) => {
    const user = await findPerson(deps.sql, restCaller(c), c.req.param('id'));
    if (!user) throw notFound('no such person');
    return c.json(presentUser(user));
  });
  app.patch(
    '/:id',
    doc(
      'People',
      'Change a name or role, disable or enable (disabling ends sessions, tokens and AI grants)',
      {
        body: Update,
      },
    ),
    async (c) => {
      const body = await jsonBody(c, Update);
      return c.json(presentUser(await updatePerson(deps.sql, restCaller(c), c.req.param('id'), body)));
    },
  );
  app.delete('/:id', doc('People', 'Delete a person (their history stays in the audit log)'), async (c) => {
    return c.json(presentUser(await deletePerson(deps.sql, restCaller(c), c.req.param('id'))));
  });
  app.post(
    '/:id/password-link',
    doc('People', 'Issue a new one-time set-password link (earlier unused links stop working)', {
      status: 201,
    }),
    async (c) => {
      const link = await passwordLink(deps.sql, deps.config.baseUrl, restCaller(c), c.req.param('id'));
      c.header('cache-control', 'no-store');
      return c.json(presentLink(link), 201);
    },
  );
  return app;
}

export function presentUser(u: UserRow) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    status: u.deleted_at ? 'deleted' : u.disabled_at ? 'disabled' : u.password_hash ? 'active' : 'invited',
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
  };
}

function presentLink(link: { url: string; expiresAt: Date }) {
  return { set_password_url: link.url, set_password_expires_at: link.expiresAt.toISOString() };
}
