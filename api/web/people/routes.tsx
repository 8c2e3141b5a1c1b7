// The People page (admins): the same domain functions as /api/v1/users.
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Deps } from '../../../core/deps.ts';
import { findPerson, listPeople } from '../../../identity/directory.ts';
import { invitationMessage, resetMessage } from '../../../identity/mail.ts';
import {
  deletePerson,
  invitePerson,
  passwordLink,
  type SetupLink,
  updatePerson,
} from '../../../identity/people.ts';
import type { Role } from '../../../store/users.ts';
import {
  adminPagesOnly,
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { PeoplePage } from './view.tsx';

/** The one-time link between the POST and the page that shows it. */
const LINK_COOKIE = 'cs_people_link';
const LINK_COOKIE_SECONDS = 120;
/** Sealed for this session only: another session's cookie does not open (AES-GCM context). */
const linkContext = (c: PageContext) => `people-link\n${c.get('csrfToken')}`;

export function peoplePageRoutes(
  deps: Pick<Deps, 'sql' | 'config' | 'keyring' | 'logger' | 'mailer'>,
): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const adminsOnly = adminPagesOnly('manage people');
  app.use('/people', adminsOnly);
  app.use('/people/*', adminsOnly);

  app.get('/people', (c) => page(c, {}));

  app.post('/people', async (c) => {
    const form = c.get('form');
    // Checked by invitePerson with the schema POST /api/v1/users uses (identity/people.ts).
    const out = await attempt(() =>
      invitePerson(deps.sql, deps.config.baseUrl, pageCaller(c), {
        email: form.email ?? '',
        name: form.name ?? '',
        role: (form.role ?? '') as Role,
      }),
    );
    // Refused (an address already taken, a malformed one): the form comes back as typed.
    if (!out.ok)
      return page(
        c,
        {
          error: out.error.detail,
          invite: { email: form.email ?? '', name: form.name ?? '', role: form.role ?? '' },
        },
        422,
      );
    const email = out.value.user.email;
    return deliver(c, invitationMessage(email, out.value.link, c.get('principal').email), out.value.link, {
      mailed: `Invited ${email}: the link to choose a password was e-mailed to them.`,
      shown: `Invited ${email}.`,
    });
  });

  app.post('/people/:id/role', async (c) => {
    // Checked by updatePerson with the schema PATCH /api/v1/users/:id uses (identity/people.ts).
    const role = c.get('form').role ?? '';
    return act(c, () => updatePerson(deps.sql, pageCaller(c), c.req.param('id'), { role }), 'Role changed.');
  });
  app.post('/people/:id/disable', (c) =>
    act(
      c,
      () => updatePerson(deps.sql, pageCaller(c), c.req.param('id'), { disabled: true }),
      'Disabled: their sessions, tokens and AI clients were ended.',
    ),
  );
  app.post('/people/:id/enable', (c) =>
    act(c, () => updatePerson(deps.sql, pageCaller(c), c.req.param('id'), { disabled: false }), 'Enabled.'),
  );
  app.post('/people/:id/delete', (c) =>
    act(c, () => deletePerson(deps.sql, pageCaller(c), c.req.param('id')), 'Deleted.'),
  );
  app.post('/people/:id/password-link', async (c) => {
    const user = await findPerson(deps.sql, pageCaller(c), c.req.param('id'));
    const out = await attempt(() =>
      passwordLink(deps.sql, deps.config.baseUrl, pageCaller(c), c.req.param('id')),
    );
    if (!out.ok || !user)
      return redirectWith(c, '/people', 'error', out.ok ? 'No such person.' : out.error.detail);
    return deliver(c, resetMessage(user.email, out.value), out.value, {
      mailed: `A password link was e-mailed to ${user.email}.`,
      shown: `A new password link for ${user.email}; earlier ones no longer work.`,
    });
  });

  /**
   * Post/Redirect/Get for a one-time link: e-mailed when SMTP is configured; otherwise (or when
   * the mail fails) it rides to the next page in a sealed, short-lived cookie bound to this
   * session, shown once there — never in a URL, so a reload neither re-posts nor shows it again.
   */
  async function deliver(
    c: PageContext,
    message: { to: string; subject: string; text: string },
    link: SetupLink,
    said: { mailed: string; shown: string },
  ) {
    if (deps.mailer) {
      try {
        await deps.mailer.send(message);
        return redirectWith(c, '/people', 'notice', said.mailed);
      } catch (err) {
        deps.logger.warn({ err: { message: (err as Error).message } }, 'invitation mail failed');
      }
    }
    const sealed = deps.keyring.encrypt(
      JSON.stringify({ email: message.to, url: link.url, expiresAt: link.expiresAt.toISOString() }),
      linkContext(c),
    );
    setCookie(c, LINK_COOKIE, sealed, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: deps.config.baseUrl.startsWith('https://'),
      path: '/people',
      maxAge: LINK_COOKIE_SECONDS,
    });
    return deps.mailer
      ? redirectWith(c, '/people', 'error', `The e-mail to ${message.to} failed: pass the link on yourself.`)
      : redirectWith(c, '/people', 'notice', said.shown);
  }

  /** The link a redirect brought, once: the cookie is cleared as it is read. */
  function takeLink(c: PageContext): ({ email: string } & SetupLink) | undefined {
    const sealed = getCookie(c, LINK_COOKIE);
    if (!sealed) return undefined;
    deleteCookie(c, LINK_COOKIE, { path: '/people', secure: deps.config.baseUrl.startsWith('https://') });
    try {
      const v = JSON.parse(deps.keyring.decrypt(sealed, linkContext(c))) as Record<string, string>;
      return { email: String(v.email), url: String(v.url), expiresAt: new Date(String(v.expiresAt)) };
    } catch {
      return undefined;
    }
  }

  async function act(c: PageContext, fn: () => Promise<unknown>, done: string) {
    const out = await attempt(fn);
    return out.ok
      ? redirectWith(c, '/people', 'notice', done)
      : redirectWith(c, '/people', 'error', out.error.detail);
  }

  async function page(
    c: PageContext,
    extra: {
      link?: { email: string } & SetupLink;
      error?: string;
      invite?: { email: string; name: string; role: string };
    },
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
        link={extra.link ?? (c.req.method === 'GET' ? takeLink(c) : undefined)}
        mailConfigured={Boolean(deps.mailer)}
        notice={c.req.query('notice')}
        error={extra.error ?? c.req.query('error')}
        invite={extra.invite}
      />,
      status,
    );
  }
  return app;
}
