// The Organization page (admins): the same domain functions as /api/v1/api-keys,
// /api/v1/agents and /api/v1/sso.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import type { AppError } from '../../../core/errors.ts';
import { aiLimitChoices, listAiClients, setAiClientControl } from '../../../governance/ai-clients.ts';
import { issueApiKey, listOrgApiKeys, markApiKeyActAs } from '../../../identity/api-keys.ts';
import { revokeOrgApiKey } from '../../../identity/manage.ts';
import { getSsoConfig, removeSsoConfig, setSsoConfig, ssoRedirectUri } from '../../../identity/sso.ts';
import { listAgents, registerAgent, revokeAgent } from '../../../registry/agents.ts';
import { ssoThrottle } from '../../rest/sso.ts';
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
import { OrganizationPage } from './view.tsx';

/** `value = role` lines of the settings form; a line without `=` is kept whole so it is named. */
function roleMapOf(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const at = line.lastIndexOf('=');
    map[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? '' : line.slice(at + 1).trim();
  }
  return map;
}

/** The SSO form's fields that show their own message (api/web/organization/view.tsx). */
const SSO_FIELDS = new Set([
  'issuer',
  'client_id',
  'client_secret',
  'role_claim',
  'role_map',
  'domains',
  'current_password',
]);

export function organizationPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const adminsOnly = adminPagesOnly('manage the organization');
  const throttleOf = (c: PageContext) => ssoThrottle(c, deps.config);
  app.use('/organization', adminsOnly);
  app.use('/organization/*', adminsOnly);

  app.get('/organization', (c) => page(c, {}));

  app.post('/organization/api-keys', async (c) => {
    const form = c.get('form');
    // Checked by issueApiKey with the schema POST /api/v1/api-keys uses (identity/api-keys.ts).
    const out = await attempt(() =>
      issueApiKey(deps.sql, c.get('principal'), pageActor(c), {
        name: form.name ?? '',
        service_account:
          form.owner === 'service_account' ? { role: (form.role ?? '') as 'member' | 'admin' } : undefined,
        act_as_allowed: form.act_as_allowed === 'true',
      }),
    );
    if (!out.ok) return redirectWith(c, '/organization', 'error', out.error.detail);
    return page(c, { created: { kind: 'key', name: out.value.key.name, secret: out.value.secret } });
  });
  app.post('/organization/api-keys/:id/act-as', async (c) => {
    const id = c.req.param('id');
    const p = c.get('principal');
    const key = (await listOrgApiKeys(deps.sql, pageCaller(c))).find((k) => k.id === id && !k.revoked_at);
    if (!key) return redirectWith(c, '/organization', 'error', 'No such API key.');
    const out = await attempt(() => markApiKeyActAs(deps.sql, p, pageActor(c), id, !key.act_as_allowed));
    return out.ok
      ? redirectWith(c, '/organization', 'notice', 'The API key was updated.')
      : redirectWith(c, '/organization', 'error', out.error.detail);
  });
  app.post('/organization/api-keys/:id/revoke', async (c) =>
    (await revokeOrgApiKey(deps.sql, pageCaller(c), c.req.param('id')))
      ? redirectWith(c, '/organization', 'notice', 'The API key was revoked.')
      : redirectWith(c, '/organization', 'error', 'No such API key.'),
  );

  app.post('/organization/agents', async (c) => {
    // Checked by registerAgent with the schema POST /api/v1/agents uses (registry/agents.ts).
    const out = await attempt(() => registerAgent(deps, pageCaller(c), c.get('form').name ?? ''));
    if (!out.ok) return redirectWith(c, '/organization', 'error', out.error.detail);
    return page(c, { created: { kind: 'agent', name: out.value.agent.name, secret: out.value.token } });
  });
  app.post('/organization/agents/:id/revoke', async (c) => {
    const out = await attempt(() => revokeAgent(deps, pageCaller(c), c.req.param('id')));
    return out.ok
      ? redirectWith(c, '/organization', 'notice', 'The agent was revoked; its tunnel closes.')
      : redirectWith(c, '/organization', 'error', out.error.detail);
  });

  app.post('/organization/sso', async (c) => {
    const f = c.get('form');
    const p = c.get('principal');
    // Checked by setSsoConfig with the schema PUT /api/v1/sso uses (identity/sso-input.ts); an
    // empty secret keeps the stored one there.
    const out = await attempt(() =>
      setSsoConfig(
        deps,
        p.orgId,
        { principal: p, throttle: throttleOf(c) },
        {
          issuer: (f.issuer ?? '').trim(),
          client_id: (f.client_id ?? '').trim(),
          client_secret: f.client_secret ?? '',
          provision_role: f.provision_role || null,
          role_claim: (f.role_claim ?? '').trim() || null,
          role_map: roleMapOf(f.role_map ?? ''),
          domains: (f.domains ?? '').split(/[\s,]+/).filter(Boolean),
          enabled: f.enabled === 'on',
          current_password: f.current_password,
        },
      ),
    );
    if (!out.ok) return ssoRefused(c, out.error);
    return redirectWith(c, '/organization', 'notice', 'Single sign-on saved.');
  });
  app.post('/organization/ai-clients', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const ids = [body.database_ids].flat().filter((x): x is string => typeof x === 'string' && x !== '');
    // Checked by setAiClientControl with the schema the REST route uses (governance/ai-clients.ts).
    const out = await attempt(() =>
      setAiClientControl(deps.sql, pageCaller(c), c.get('form').client_id ?? '', {
        disabled: c.get('form').disabled === 'on',
        database_ids: ids.length > 0 ? ids : null,
      }),
    );
    return out.ok
      ? redirectWith(c, '/organization#ai-clients', 'notice', 'AI client limits saved.')
      : redirectWith(c, '/organization', 'error', out.error.detail);
  });

  app.post('/organization/sso/delete', async (c) => {
    const p = c.get('principal');
    const out = await attempt(() =>
      removeSsoConfig(deps.sql, p.orgId, {
        principal: p,
        currentPassword: c.get('form').current_password,
        throttle: throttleOf(c),
      }),
    );
    if (!out.ok) return ssoRefused(c, out.error);
    return redirectWith(c, '/organization', 'notice', 'Single sign-on is off.');
  });

  /** A refused SSO change: each field's first message beside it, anything else on top. */
  function ssoRefused(c: PageContext, err: AppError) {
    if (!err.errors?.length) return page(c, { ssoErrors: { form: err.detail } }, 403);
    const errors: Record<string, string> = {};
    for (const e of err.errors) {
      const field = e.path.split('.')[0] ?? '';
      if (SSO_FIELDS.has(field)) errors[field] ??= e.message;
      else errors.form ??= `${e.path || '(body)'}: ${e.message}`;
    }
    return page(c, { ssoErrors: errors }, 422);
  }

  async function page(
    c: PageContext,
    extra: {
      created?: { kind: 'key' | 'agent'; name: string; secret: string };
      ssoErrors?: Record<string, string>;
    },
    status: 200 | 403 | 422 = 200,
  ) {
    const orgId = c.get('principal').orgId;
    // A page carrying a secret is never cached (STYLE.md 8).
    c.header('cache-control', 'no-store');
    return render(
      c,
      'organization',
      'Organization',
      <OrganizationPage
        keys={await listOrgApiKeys(deps.sql, pageCaller(c))}
        superAdmin={c.get('principal').role === 'super_admin'}
        agents={await listAgents(deps, orgId)}
        sso={await getSsoConfig(deps.sql, orgId)}
        aiClients={await listAiClients(deps.sql, pageCaller(c))}
        aiDatabases={await aiLimitChoices(deps.sql, pageCaller(c))}
        ssoRedirectUri={ssoRedirectUri(deps.config.baseUrl)}
        baseUrl={deps.config.baseUrl}
        csrf={c.get('csrfToken')}
        created={extra.created}
        ssoErrors={extra.ssoErrors}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
      status,
    );
  }
  return app;
}
