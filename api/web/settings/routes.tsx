// The person's own settings: tokens, connected AI clients, sessions and password.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import {
  endMyOtherSessions,
  endMySession,
  issueMyToken,
  myAccount,
  mySessions,
  myTokens,
} from '../../../identity/account.ts';
import { changePassword, MIN_PASSWORD_LENGTH, revokeUserToken } from '../../../identity/manage.ts';
import { disconnectClient, listConnectedClients } from '../../../identity/oauth-grants.ts';
import type { UserPrincipal } from '../../../identity/principal.ts';
import {
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { SignInSecurity } from './security.tsx';
import { SettingsPage } from './view.tsx';

export function settingsPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();

  app.get('/settings', (c) => settingsPage(c, {}));

  // The new secret is shown on this response only (never in a URL, a redirect or the store).
  app.post('/settings/tokens', async (c) => {
    const form = c.get('form');
    const days = (form.expires_in_days ?? '').trim();
    // Checked by issueMyToken with the schema POST /api/v1/tokens uses (identity/account.ts).
    const out = await attempt(() =>
      issueMyToken(deps.sql, pageCaller(c), {
        name: form.name ?? '',
        expires_in_days: days === '' ? null : /^\d+$/.test(days) ? Number(days) : Number.NaN,
      }),
    );
    if (!out.ok) return settingsPage(c, { error: out.error.detail }, 422);
    return settingsPage(c, { created: { name: out.value.token.name, secret: out.value.secret } });
  });

  app.post('/settings/tokens/:id/revoke', async (c) => {
    const ok = await revokeUserToken(deps.sql, c.get('principal').userId, c.req.param('id'));
    return ok
      ? redirectWith(c, '/settings', 'notice', 'The token was revoked.')
      : redirectWith(c, '/settings', 'error', 'No such token.');
  });

  app.post('/settings/clients/:grantId/revoke', async (c) => {
    const ok = await disconnectClient(deps.sql, c.get('principal').userId, c.req.param('grantId'));
    return ok
      ? redirectWith(c, '/settings', 'notice', 'The AI client was disconnected.')
      : redirectWith(c, '/settings', 'error', 'No such connected client.');
  });

  app.post('/settings/sessions/:id/end', async (c) => {
    const ok = await endMySession(deps.sql, pageCaller(c), c.req.param('id'));
    return ok
      ? redirectWith(c, '/settings', 'notice', 'The session was ended.')
      : redirectWith(c, '/settings', 'error', 'No such session.');
  });

  app.post('/settings/sessions/end-others', async (c) => {
    const p = c.get('principal');
    const n = await endMyOtherSessions(deps.sql, pageCaller(c), currentSession(p));
    return redirectWith(c, '/settings', 'notice', `${n} other session(s) ended.`);
  });

  app.post('/settings/password', async (c) => {
    const p = c.get('principal');
    const form = c.get('form');
    const outcome = await changePassword(deps.sql, {
      userId: p.userId,
      current: form.current_password ?? '',
      next: form.new_password ?? '',
      keepSessionId: currentSession(p),
    });
    if (outcome === 'wrong_current') return settingsPage(c, { error: 'The current password is wrong.' }, 422);
    if (outcome === 'too_short')
      return settingsPage(
        c,
        { error: `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.` },
        422,
      );
    return redirectWith(c, '/settings', 'notice', 'Password changed; every other session was ended.');
  });

  async function settingsPage(
    c: PageContext,
    extra: { created?: { name: string; secret: string }; error?: string },
    status: 200 | 422 = 200,
  ) {
    const p = c.get('principal');
    const [tokens, clients, sessions, user] = await Promise.all([
      myTokens(deps.sql, pageCaller(c)),
      listConnectedClients(deps.sql, p.userId),
      mySessions(deps.sql, pageCaller(c)),
      myAccount(deps.sql, pageCaller(c)),
    ]);
    return render(
      c,
      'settings',
      'Settings',
      <SettingsPage
        tokens={tokens}
        clients={clients}
        csrf={c.get('csrfToken')}
        created={extra.created}
        notice={c.req.query('notice')}
        error={extra.error ?? c.req.query('error')}
      >
        <SignInSecurity
          sessions={sessions}
          currentSessionId={currentSession(p)}
          hasPassword={Boolean(user?.password_hash)}
          csrf={c.get('csrfToken')}
        />
      </SettingsPage>,
      status,
    );
  }
  return app;
}

/** The session a page request came with (pages are always session-authenticated). */
function currentSession(p: UserPrincipal): string | null {
  return p.via === 'session' ? p.credentialId : null;
}
