// The organization's OIDC single sign-on settings (`GET/PUT/DELETE /api/v1/sso`).
import { type Context, Hono } from 'hono';
import * as v from 'valibot';
import type { Deps } from '../../core/deps.ts';
import { getSsoConfig, removeSsoConfig, setSsoConfig, ssoRedirectUri } from '../../identity/sso.ts';
import { SsoInput } from '../../identity/sso-input.ts';
import type { SsoConfigRow } from '../../store/sso.ts';
import type { AppEnv } from '../env.ts';
import { notFound } from '../errors.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { clientAddress } from '../middleware/client-address.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

// The schema is identity's (identity/sso-input.ts): the Organization page's form uses it too.
const SsoRemoval = v.object({ current_password: v.optional(v.pipe(v.string(), v.maxLength(1000))) });

export function ssoAdminRoutes(deps: Pick<Deps, 'sql' | 'keyring' | 'config' | 'logger'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const throttleOf = (c: Context) => ssoThrottle(c, deps.config);
  const admin = [authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin()] as const;
  app.get(
    '/api/v1/sso',
    doc('SSO', 'Get the OIDC single sign-on settings of the organization', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    ...admin,
    async (c) => {
      const cfg = await getSsoConfig(deps.sql, c.get('principal').orgId);
      if (!cfg) throw notFound('single sign-on is not configured');
      return c.json(shape(cfg, deps.config.baseUrl));
    },
  );
  app.put(
    '/api/v1/sso',
    doc('SSO', 'Set the OIDC single sign-on settings (super admin, with current_password; secret sealed)', {
      auth: ['bearer', 'session'],
      body: SsoInput,
    }),
    ...admin,
    async (c) => {
      // Parsed again by setSsoConfig, which the Organization page's form calls too.
      const body = await jsonBody(c, SsoInput);
      const p = c.get('principal');
      const cfg = await setSsoConfig(deps, p.orgId, { principal: p, throttle: throttleOf(c) }, body);
      return c.json(shape(cfg, deps.config.baseUrl));
    },
  );
  app.delete(
    '/api/v1/sso',
    doc('SSO', 'Turn single sign-on off (super admin, with current_password in the body)', {
      auth: ['bearer', 'session'],
      body: SsoRemoval,
    }),
    ...admin,
    async (c) => {
      // The body is optional here: a key or a non-super-admin is refused for who it is (403).
      const body = (await c.req.text()).trim() === '' ? {} : await jsonBody(c, SsoRemoval);
      const p = c.get('principal');
      if (
        !(await removeSsoConfig(deps.sql, p.orgId, {
          principal: p,
          currentPassword: body.current_password,
          throttle: throttleOf(c),
        }))
      )
        throw notFound('single sign-on is not configured');
      return c.body(null, 204);
    },
  );
  return app;
}

/** The sign-in limits a password entered again for an SSO change counts in (identity/sso-authority.ts). */
export function ssoThrottle(c: Context, config: Pick<Deps['config'], 'rateLimits' | 'trustedProxies'>) {
  return { limits: config.rateLimits, address: clientAddress(c, config.trustedProxies) };
}

/** The configuration as the API shows it: never the client secret. */
function shape(cfg: SsoConfigRow, baseUrl: string) {
  return {
    id: cfg.id,
    issuer: cfg.issuer,
    client_id: cfg.client_id,
    provision_role: cfg.provision_role,
    role_claim: cfg.role_claim,
    role_map: cfg.role_map,
    domains: cfg.domains,
    enabled: cfg.enabled,
    redirect_uri: ssoRedirectUri(baseUrl),
    updated_at: cfg.updated_at.toISOString(),
  };
}
