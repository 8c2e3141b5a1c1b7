// The People page (admins): the same domain functions as /api/v1/users.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { findPerson, listPeople } from '../../../identity/directory.ts';
import {
  deletePerson,
  invitePerson,
  passwordLink,
  ROLES,
  type SetupLink,
  updatePerson,
} from '../../../identity/people.ts';
import type { Role } from '../../../store/users.ts';
import {
  adminPagesOnly,
  attempt,
  type PageContext,
  type PageEnv,
  pageActor,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { PeoplePage } from './view.tsx';

export function peoplePageRoutes(deps: Pick<Deps, 'sql' | 'config'>): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const adminsOnly = adminPagesOnly('manage people');
  app.use('/people', adminsOnly);
  app.use('/people/*', adminsOnly);
  const actor = pageActor;

  app.get('/people', (c) => page(c, {}));

  app.post('/people', async (c) => {
    const form = c.get('form');
    // Checked by invitePerson with the schema POST /api/v1/users uses (identity/people.ts).
    const out = await attempt(() =>
      invitePerson(deps.sql, deps.config.baseUrl, c.get('principal').orgId, actor(c), {
        email: form.email ?? '',
        name: form.name ?? '',
        role: (form.role ?? '') as Role,
      }),
    );
    if (!out.ok) return page(c, { error: out.error.detail }, 422);
    return page(c, { link: { email: out.value.user.email, ...out.value.link } });
  });

  app.post('/people/:id/role', async (c) => {
    const role = c.get('form').role as Role;
    if (!ROLES.includes(role)) return redirectWith(c, '/people', 'error', 'Choose a role.');
    return act(
      c,
      () => updatePerson(deps.sql, c.get('principal').orgId, actor(c), c.req.param('id'), { role }),
      'Role changed.',
    );
  });
  app.post('/people/:id/disable', (c) =>
    act(
      c,
      () => updatePerson(deps.sql, c.get('principal').orgId, actor(c), c.req.param('id'), { disabled: true }),
      'Disabled: their sessions, tokens and AI clients were ended.',
    ),
  );
  app.post('/people/:id/enable', (c) =>
    act(
      c,
      () =>
        updatePerson(deps.sql, c.get('principal').orgId, actor(c), c.req.param('id'), { disabled: false }),
      'Enabled.',
    ),
  );
  app.post('/people/:id/delete', (c) =>
    act(c, () => deletePerson(deps.sql, c.get('principal').orgId, actor(c), c.req.param('id')), 'Deleted.'),
  );
  app.post('/people/:id/password-link', async (c) => {
    const user = await findPerson(deps.sql, pageCaller(c), c.req.param('id'));
    const out = await attempt(() =>
      passwordLink(deps.sql, deps.config.baseUrl, c.get('principal').orgId, actor(c), c.req.param('id')),
    );
    if (!out.ok || !user)
      return redirectWith(c, '/people', 'error', out.ok ? 'No such person.' : out.error.detail);
    return page(c, { link: { email: user.email, ...out.value } });
  });

  async function act(c: PageContext, fn: () => Promise<unknown>, done: string) {
    const out = await attempt(fn);
    return out.ok
      ? redirectWith(c, '/people', 'notice', done)
      : redirectWith(c, '/people', 'error', out.error.detail);
  }

  async function page(
    c: PageContext,
    extra: { link?: { email: string } & SetupLink; error?: string },
    status: 200 | 422 = 200,
  ) {
    const p = c.get('principal');
    return render(
      c,
      'people',
      'People',
      <PeoplePage
        people={await listPeople(deps.sql, pageCaller(c))}
        me={p.userId}
        canManageSuperAdmins={p.role === 'super_admin'}
        csrf={c.get('csrfToken')}
        link={extra.link}
        notice={c.req.query('notice')}
        error={extra.error ?? c.req.query('error')}
      />,
      status,
    );
  }
  return app;
}
