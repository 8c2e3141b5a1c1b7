import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { issueMyToken, myTokens, TokenInput } from '../../identity/account.ts';
import { revokeUserToken } from '../../identity/manage.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import type { PersonalTokenRow } from '../../store/personal-tokens.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { forbidden, notFound } from '../errors.ts';
import { authenticate } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The domain's schema (identity/account.ts): the settings page's form answers the same errors.
const CreateToken = TokenInput;

/** A user's personal access tokens: they act as that user (SPEC.md 5.2). */
export function tokenRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['token', 'session']));
  app.post(
    '/',
    doc('Identity', 'Create a personal access token (shown once)', {
      auth: ['bearer', 'session'],
      body: CreateToken,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, CreateToken);
      asUser(c.get('principal'));
      const { token, secret } = await issueMyToken(deps.sql, restCaller(c), body);
      c.header('cache-control', 'no-store');
      return c.json({ ...present(token), token: secret }, 201);
    },
  );
  app.get(
    '/',
    doc('Identity', 'List your personal access tokens', { auth: ['bearer', 'session'] }),
    async (c) => {
      asUser(c.get('principal'));
      return c.json({ data: (await myTokens(deps.sql, restCaller(c))).map(present) });
    },
  );
  app.delete(
    '/:id',
    doc('Identity', 'Revoke a personal access token', { auth: ['bearer', 'session'], status: 204 }),
    async (c) => {
      const user = asUser(c.get('principal'));
      if (!(await revokeUserToken(deps.sql, user.userId, c.req.param('id')))) throw notFound('no such token');
      return c.body(null, 204);
    },
  );
  return app;
}

function asUser(p: AppEnv['Variables']['principal']): UserPrincipal {
  if (p.kind !== 'user') throw forbidden('personal tokens belong to a user');
  return p;
}

function present(t: PersonalTokenRow) {
  return {
    id: t.id,
    name: t.name,
    created_at: t.created_at.toISOString(),
    expires_at: t.expires_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    revoked_at: t.revoked_at?.toISOString() ?? null,
  };
}
