// The audit walk's steps through the pages' forms and the REST routes that share their domain
// function (test/governance/audit-walk.test.ts runs them): each one change, one audit entry.
import { expect } from 'vitest';
import { servers } from '../harness/servers.ts';
import type { Person, World } from './world.ts';

export interface Step {
  route: string;
  event: string;
  /** Who the entry must name: a person of the walk, or the organization's key. */
  actor: () => { user?: string; key?: boolean };
  run: () => Promise<Response>;
  /** The entry's subject, and the entry's columns a query entry fills (its request). */
  check?: (subject: Record<string, unknown>, entry: { request_id: string | null }) => void;
}

/** What the steps need from the walk, read when they run (the world starts in beforeAll). */
export interface WalkKit {
  world(): World;
  member(): Person;
  /** A form posted with the super admin's page session (confirmed, CSRF token included). */
  form(path: string, fields?: Record<string, string>): Promise<Response>;
  ids: Record<string, string>;
  secrets: string[];
}

export function pageSteps(k: WalkKit): Step[] {
  const w = () => k.world();
  const root = () => ({ user: w().root.id });
  const byMember = () => ({ user: k.member().id });
  const rest = (method: string, path: string, body?: unknown) => w().as(w().root, method, path, body);
  const one = async <T>(rows: PromiseLike<readonly T[]>): Promise<T> => {
    const [row] = await rows;
    expect(row).toBeDefined();
    return row!;
  };
  const idWhere = async (name: string, query: PromiseLike<readonly object[]>) => {
    k.ids[name] = String(((await one(query)) as { id: unknown }).id);
  };
  const sql = () => w().svc.deps.sql;
  const password = () => w().svc.admin.password;
  const sso = (secret: string) => ({
    issuer: 'https://login.walk.example.test',
    client_id: 'walk',
    client_secret: secret,
    current_password: password(),
  });
  const request = (who: Person, statement: string, name: string) => async () => {
    const res = await w().as(who, 'POST', '/api/v1/desk/query-requests', {
      database_id: k.ids.pdb,
      statement,
    });
    k.ids[name] = ((await res.clone().json()) as { request: { id: string } }).request.id;
    return res;
  };

  return [
    // The Organization page and its REST twins.
    {
      route: 'POST /organization/api-keys',
      event: 'api_key.create',
      actor: root,
      run: async () => {
        const res = await k.form('/organization/api-keys', { name: 'walk-page', owner: 'me' });
        const shown = /value="(cs[^"]+)"/.exec(await res.clone().text())?.[1];
        if (shown) k.secrets.push(shown);
        await idWhere('pkey', sql()`select id from api_keys where name = 'walk-page'`);
        return res;
      },
    },
    {
      route: 'POST /organization/api-keys/:id/act-as',
      event: 'api_key.act_as_allowed',
      actor: root,
      run: () => k.form(`/organization/api-keys/${k.ids.pkey}/act-as`),
      check: (s) => expect(s.act_as_allowed).toBe(true),
    },
    {
      route: 'PATCH /api/v1/api-keys/:id',
      event: 'api_key.act_as_allowed',
      actor: root,
      run: () => rest('PATCH', `/api/v1/api-keys/${k.ids.pkey}`, { act_as_allowed: false }),
      check: (s) => expect(s.act_as_allowed).toBe(false),
    },
    {
      route: 'POST /organization/api-keys/:id/revoke',
      event: 'api_key.revoked',
      actor: root,
      run: () => k.form(`/organization/api-keys/${k.ids.pkey}/revoke`),
      check: (s) => expect(s.api_key_id).toBe(k.ids.pkey),
    },
    {
      route: 'POST /organization/agents',
      event: 'agent.registered',
      actor: root,
      run: async () => {
        const res = await k.form('/organization/agents', { name: 'walk-page-edge' });
        await idWhere('pagent', sql()`select id from agents where name = 'walk-page-edge'`);
        return res;
      },
    },
    {
      route: 'POST /organization/agents/:id/revoke',
      event: 'agent.revoked',
      actor: root,
      run: () => k.form(`/organization/agents/${k.ids.pagent}/revoke`),
    },
    {
      route: 'PUT /api/v1/ai-clients/:clientId',
      event: 'ai_client.limited',
      actor: root,
      run: async () => {
        // An AI client registers itself (RFC 7591); registering changes no organization.
        const reg = await w().svc.fetch('/oauth/register', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_name: 'walk client',
            redirect_uris: ['http://127.0.0.1:9/callback'],
            token_endpoint_auth_method: 'none',
          }),
        });
        expect(reg.status).toBe(201);
        k.ids.client = ((await reg.json()) as { client_id: string }).client_id;
        return rest('PUT', `/api/v1/ai-clients/${k.ids.client}`, { disabled: true, database_ids: null });
      },
      check: (s) => expect(s).toMatchObject({ disabled: true, database_ids: null }),
    },
    {
      route: 'POST /organization/ai-clients',
      event: 'ai_client.limited',
      actor: root,
      run: () => k.form('/organization/ai-clients', { client_id: k.ids.client!, database_ids: k.ids.db! }),
      check: (s) => expect(s).toMatchObject({ disabled: false, database_ids: [k.ids.db] }),
    },
    {
      route: 'PUT /api/v1/sso',
      event: 'sso.updated',
      actor: root,
      run: () => {
        k.secrets.push('walk sso secret one', 'walk sso secret two');
        return rest('PUT', '/api/v1/sso', sso('walk sso secret one'));
      },
    },
    {
      route: 'POST /organization/sso',
      event: 'sso.updated',
      actor: root,
      // An empty secret keeps the stored one.
      run: () => k.form('/organization/sso', { ...sso(''), client_id: 'walk-2', enabled: 'on' }),
      check: (s) => expect(s.client_id).toBe('walk-2'),
    },
    {
      route: 'DELETE /api/v1/sso',
      event: 'sso.deleted',
      actor: root,
      run: () => rest('DELETE', '/api/v1/sso', { current_password: password() }),
    },
    {
      route: 'POST /organization/sso',
      event: 'sso.updated',
      actor: root,
      run: () => k.form('/organization/sso', { ...sso('walk sso secret two'), enabled: 'on' }),
    },
    {
      route: 'POST /organization/sso/delete',
      event: 'sso.deleted',
      actor: root,
      run: () => k.form('/organization/sso/delete', { current_password: password() }),
    },

    // The People page and its REST twins.
    {
      route: 'POST /people',
      event: 'user.created',
      actor: root,
      run: async () => {
        const res = await k.form('/people', {
          email: 'walk-page@example.test',
          name: 'Walk',
          role: 'member',
        });
        await idWhere('puser', sql()`select id from users where email = 'walk-page@example.test'`);
        return res;
      },
    },
    {
      route: 'POST /people/:id/role',
      event: 'user.role_changed',
      actor: root,
      run: () => k.form(`/people/${k.ids.puser}/role`, { role: 'admin' }),
      check: (s) => expect(s).toMatchObject({ from: 'member', to: 'admin' }),
    },
    {
      route: 'POST /people/:id/disable',
      event: 'user.disabled',
      actor: root,
      run: () => k.form(`/people/${k.ids.puser}/disable`),
    },
    {
      route: 'POST /people/:id/enable',
      event: 'user.enabled',
      actor: root,
      run: () => k.form(`/people/${k.ids.puser}/enable`),
    },
    {
      route: 'POST /people/:id/password-link',
      event: 'user.password_reset',
      actor: root,
      run: async () => {
        const res = await k.form(`/people/${k.ids.puser}/password-link`);
        const link = /(https?:\/\/[^"<\s]*set-password[^"<\s]*)/.exec(await res.clone().text())?.[1];
        if (link) k.secrets.push(new URL(link.replaceAll('&amp;', '&')).searchParams.get('token') ?? link);
        return res;
      },
    },
    {
      route: 'POST /api/v1/users/:id/password-link',
      event: 'user.password_reset',
      actor: root,
      run: async () => {
        const res = await rest('POST', `/api/v1/users/${k.ids.puser}/password-link`);
        const body = (await res.clone().json()) as { url?: string; token?: string };
        if (body.token) k.secrets.push(body.token);
        else if (body.url) k.secrets.push(new URL(body.url).searchParams.get('token') ?? body.url);
        return res;
      },
    },
    {
      route: 'POST /people/:id/delete',
      event: 'user.deleted',
      actor: root,
      run: () => k.form(`/people/${k.ids.puser}/delete`),
    },

    // The Settings page's tokens.
    {
      route: 'POST /settings/tokens',
      event: 'token.created',
      actor: root,
      run: async () => {
        const res = await k.form('/settings/tokens', { name: 'walk-page' });
        await idWhere('ptoken', sql()`select id from personal_tokens where name = 'walk-page'`);
        return res;
      },
    },
    {
      route: 'POST /settings/tokens/:id/revoke',
      event: 'token.revoked',
      actor: root,
      run: () => k.form(`/settings/tokens/${k.ids.ptoken}/revoke`),
    },

    // The Databases page: a database registered and changed through its forms.
    {
      route: 'POST /databases',
      event: 'database.created',
      actor: root,
      run: async () => {
        const pg = servers().postgres;
        const res = await k.form('/databases', {
          name: 'walk-page',
          adapter: 'postgres',
          hostname: pg.host,
          port: String(pg.port),
          database: pg.database,
          c0_username: pg.user,
          c0_password: pg.password,
          c0_reviews_required: '1',
          default_credential: '0',
        });
        k.ids.pdb = /\/databases\/([^/?]+)/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
        const cred = await one(
          sql()<{ id: string }[]>`select id from credentials where database_id = ${k.ids.pdb ?? ''}`,
        );
        k.ids.pcred = cred.id;
        return res;
      },
      check: (s) => expect(s.before).toBeNull(),
    },
    {
      route: 'POST /databases/:id',
      event: 'database.updated',
      actor: root,
      run: () => {
        const pg = servers().postgres;
        return k.form(`/databases/${k.ids.pdb}`, {
          name: 'walk-page-2',
          adapter: 'postgres',
          hostname: pg.host,
          port: String(pg.port),
          database: pg.database,
          restrict_access: 'on',
        });
      },
      check: (s) =>
        expect(s).toMatchObject({ before: { name: 'walk-page' }, after: { name: 'walk-page-2' } }),
    },
    {
      route: 'POST /databases/:id/credentials',
      event: 'database.updated',
      actor: root,
      run: async () => {
        const res = await k.form(`/databases/${k.ids.pdb}/credentials`, {
          username: 'walk_reader',
          password: 'walk reader password',
          reviews_required: '0',
        });
        k.secrets.push('walk reader password');
        await idWhere(
          'pcred2',
          sql()`select id from credentials where database_id = ${k.ids.pdb ?? ''} and username = 'walk_reader'`,
        );
        return res;
      },
    },
    {
      route: 'POST /databases/:id/credentials/:cid',
      event: 'database.updated',
      actor: root,
      run: () =>
        k.form(`/databases/${k.ids.pdb}/credentials/${k.ids.pcred2}`, {
          username: 'walk_reader',
          reviews_required: '2',
        }),
    },
    {
      route: 'POST /databases/:id/credentials/:cid/grants',
      event: 'credential.grant_added',
      actor: root,
      run: async () => {
        const res = await k.form(`/databases/${k.ids.pdb}/credentials/${k.ids.pcred2}/grants`, {
          grantee: 'role:member',
        });
        await idWhere(
          'pcgrant',
          sql()`select id from credential_grants where credential_id = ${k.ids.pcred2 ?? ''}`,
        );
        return res;
      },
    },
    {
      route: 'POST /databases/:id/credentials/:cid/grants/:gid/delete',
      event: 'credential.grant_removed',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/credentials/${k.ids.pcred2}/grants/${k.ids.pcgrant}/delete`),
    },
    {
      route: 'POST /databases/:id/credentials/:cid/delete',
      event: 'database.updated',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/credentials/${k.ids.pcred2}/delete`),
    },
    {
      route: 'POST /databases/:id/grants',
      event: 'database.grant_added',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/grants`, { user_id: k.member().id }),
    },

    // Its data-protection page.
    {
      route: 'POST /databases/:id/policies',
      event: 'policy.created',
      actor: root,
      run: async () => {
        const res = await k.form(`/databases/${k.ids.pdb}/policies`, { name: 'walk-page' });
        await idWhere(
          'ppolicy',
          sql()`select id from data_protection_policies where database_id = ${k.ids.pdb ?? ''}`,
        );
        return res;
      },
    },
    {
      route: 'POST /databases/:id/policies/:pid/assignments',
      event: 'policy.assigned',
      actor: root,
      run: () =>
        k.form(`/databases/${k.ids.pdb}/policies/${k.ids.ppolicy}/assignments`, { role_member: 'on' }),
      check: (s) => expect(s).toMatchObject({ before: { roles: [] }, after: { roles: ['member'] } }),
    },
    {
      route: 'POST /databases/:id/policies/:pid/delete',
      event: 'policy.deleted',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/policies/${k.ids.ppolicy}/delete`),
    },

    // The Reviews page: the super admin's own request edited and canceled, the member's reviewed.
    {
      route: 'POST /api/v1/desk/query-requests',
      event: 'query',
      actor: root,
      run: () => request(w().root, 'select 1', 'preq')(),
    },
    {
      route: 'POST /reviews/:id/edit',
      event: 'review.edited',
      actor: root,
      run: () => k.form(`/reviews/${k.ids.preq}/edit`, { statement: 'select 2' }),
      check: (s) =>
        expect(s).toMatchObject({ before: { statement: 'select 1' }, after: { statement: 'select 2' } }),
    },
    {
      route: 'POST /reviews/:id/cancel',
      event: 'review.canceled',
      actor: root,
      run: () => k.form(`/reviews/${k.ids.preq}/cancel`),
    },
    {
      route: 'POST /api/v1/desk/query-requests',
      event: 'query',
      actor: byMember,
      run: () => request(k.member(), 'select 3', 'mreq')(),
    },
    {
      route: 'POST /reviews/:id/review',
      event: 'review.commented',
      actor: root,
      run: () => k.form(`/reviews/${k.ids.mreq}/review`, { verdict: 'comment', comment: 'why?' }),
    },
    {
      route: 'POST /reviews/:id/review',
      event: 'review.approved',
      actor: root,
      run: () => k.form(`/reviews/${k.ids.mreq}/review`, { verdict: 'approve', comment: '' }),
    },
    {
      route: 'POST /api/v1/desk/query-requests/:id/run',
      event: 'query',
      actor: byMember,
      run: () => w().as(k.member(), 'POST', `/api/v1/desk/query-requests/${k.ids.mreq}/run`, {}),
      check: (_, entry) => expect(entry.request_id).toBe(k.ids.mreq),
    },
    {
      route: 'POST /databases/:id/grants/:userId/delete',
      event: 'database.grant_removed',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/grants/${k.member().id}/delete`),
    },
    {
      route: 'POST /databases/:id/delete',
      event: 'database.deleted',
      actor: root,
      run: () => k.form(`/databases/${k.ids.pdb}/delete`, { confirm: 'walk-page-2' }),
    },

    // The Workflows page.
    {
      route: 'POST /api/v1/workflows',
      event: 'workflow.created',
      actor: root,
      run: async () => {
        const res = await rest('POST', '/api/v1/workflows', {
          name: 'walk-page',
          steps: [{ name: 'hello', action: { __type__: 'chat', chat_channel: '#general', message: 'hi' } }],
        });
        k.ids.pwf = ((await res.clone().json()) as { id: string }).id;
        return res;
      },
    },
    {
      route: 'POST /workflows/:id/archive',
      event: 'workflow.archived',
      actor: root,
      run: () => k.form(`/workflows/${k.ids.pwf}/archive`),
    },

    // Last, since the steps above prove the super admin's password: they change it themselves.
    {
      route: 'POST /settings/password',
      event: 'user.password_changed',
      actor: root,
      run: () => {
        k.secrets.push('the walk changed this password');
        return k.form('/settings/password', {
          current_password: password(),
          new_password: 'the walk changed this password',
        });
      },
      check: (s) => expect(s).toEqual({ user_id: w().root.id, sessions_ended: 0 }),
    },
  ];
}
