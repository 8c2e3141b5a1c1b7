// Every state-changing route of the app is walked, or named with why it records no change of the
// organization: each walked change appends exactly one audit entry of its kind, by its actor, and
// the chain verifies afterwards. No secret the walk handled appears in any entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { verifyAuditChain } from '../../audit/events.ts';
import { servers } from '../harness/servers.ts';
import { signIn } from '../helpers/service.ts';
import { pageSteps, type Step } from './audit-walk-steps.ts';
import { json, type Person, startWorld, type World } from './world.ts';

let w: World;
let admin: Person;
let member: Person;
let page: { cookie: string; csrf: string };
const secrets: string[] = [];
const ids: Record<string, string> = {};

const as = (who: Person | 'key', method: string, path: string, body?: unknown) =>
  w.as(who, method, path, body);
const form = (path: string, fields: Record<string, string> = {}) =>
  w.svc.fetch(path, {
    method: 'POST',
    headers: { cookie: page.cookie },
    // `_confirmed`: the second POST of a confirmation step (api/web/kit/confirm.tsx) is the one that acts.
    body: new URLSearchParams({ _csrf: page.csrf, _confirmed: 'yes', ...fields }),
    redirect: 'manual',
  });
const byRoot = () => ({ user: w.root.id });
const byAdmin = () => ({ user: admin.id });
const byKey = () => ({ key: true });
const keep = (name: string) => async (res: Response) => {
  const body = (await res.clone().json()) as Record<string, unknown>;
  ids[name] = String(body.id);
  return res;
};

const STEPS: Step[] = [
  {
    route: 'POST /api/v1/desk/databases',
    event: 'database.created',
    actor: byAdmin,
    run: async () => {
      const pg = servers().postgres;
      return as(admin, 'POST', '/api/v1/desk/databases', {
        name: 'walk',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        credentials: [{ username: pg.user, password: pg.password, reviews_required: 1 }],
      }).then(keep('db'));
    },
    check: (s) => {
      expect(s.before).toBeNull();
      expect(s.after).toMatchObject({ name: 'walk', restrict_access: false });
    },
  },
  {
    route: 'PATCH /api/v1/desk/databases/:id',
    event: 'database.updated',
    actor: byAdmin,
    run: async () => {
      const db = await json<{ credentials: Array<{ id: string }> }>(
        await as(admin, 'GET', `/api/v1/desk/databases/${ids.db}`),
      );
      ids.cred = db.credentials[0]!.id;
      return as(admin, 'PATCH', `/api/v1/desk/databases/${ids.db}`, {
        restrict_access: true,
        credentials: [{ id: ids.cred, password: servers().postgres.password, reviews_required: 1 }],
      });
    },
    check: (s) => {
      expect(s.before).toEqual({ restrict_access: false });
      expect(s.after).toEqual({ restrict_access: true });
      expect(s.secrets_changed).toEqual([`credential ${ids.cred} password`]);
    },
  },
  {
    route: 'PUT /api/v1/desk/databases/setup',
    event: 'database.created',
    actor: byKey,
    run: () => {
      const pg = servers().postgres;
      return as('key', 'PUT', '/api/v1/desk/databases/setup', {
        id: 'walk-setup',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        username: pg.user,
        password: pg.password,
        ssl: 'disabled',
        reviews_required: 0,
        review_bypass_allowed: false,
      });
    },
  },
  {
    route: 'DELETE /api/v1/desk/databases/remove/:api_id',
    event: 'database.deleted',
    actor: byKey,
    run: () => as('key', 'DELETE', '/api/v1/desk/databases/remove/walk-setup'),
    check: (s) => expect(s.after).toBeNull(),
  },
  {
    route: 'POST /api/v1/desk/databases/:id/grants',
    event: 'database.grant_added',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/api/v1/desk/databases/${ids.db}/grants`, { user_id: member.id }),
    check: (s) => expect(s.user_id).toBe(member.id),
  },
  {
    route: 'POST /api/v1/desk/databases/:id/credentials/:credentialId/grants',
    event: 'credential.grant_added',
    actor: byAdmin,
    run: () =>
      as(admin, 'POST', `/api/v1/desk/databases/${ids.db}/credentials/${ids.cred}/grants`, {
        role: 'member',
      }).then(keep('cgrant')),
  },
  {
    route: 'DELETE /api/v1/desk/databases/:id/credentials/:credentialId/grants/:grantId',
    event: 'credential.grant_removed',
    actor: byAdmin,
    run: () =>
      as(admin, 'DELETE', `/api/v1/desk/databases/${ids.db}/credentials/${ids.cred}/grants/${ids.cgrant}`),
  },
  {
    route: 'POST /api/v1/desk/databases/:id/policies',
    event: 'policy.created',
    actor: byAdmin,
    run: () =>
      as(admin, 'POST', `/api/v1/desk/databases/${ids.db}/policies`, {
        name: 'support',
        rules: [{ table: 'users', column: 'ssn', action: 'mask' }],
      }).then(keep('policy')),
  },
  {
    route: 'PATCH /api/v1/desk/databases/:id/policies/:pid',
    event: 'policy.updated',
    actor: byAdmin,
    run: () =>
      as(admin, 'PATCH', `/api/v1/desk/databases/${ids.db}/policies/${ids.policy}`, {
        rules: [{ table: 'users', column: 'ssn', action: 'partial', keep_last: 4 }],
      }),
    check: (s) => {
      expect(s.before).toEqual({ 'rule users.ssn': { action: 'mask' } });
      expect(s.after).toEqual({ 'rule users.ssn': { action: 'partial', keep_first: 0, keep_last: 4 } });
    },
  },
  {
    route: 'POST /databases/:id/policies/:pid/rules/:index/delete',
    event: 'policy.updated',
    actor: byRoot,
    run: () => form(`/databases/${ids.db}/policies/${ids.policy}/rules/0/delete`),
    check: (s) => {
      expect(s.before).toEqual({ 'rule users.ssn': { action: 'partial', keep_first: 0, keep_last: 4 } });
      expect(s.after).toEqual({ 'rule users.ssn': null });
    },
  },
  {
    route: 'POST /databases/:id/policies/:pid/rules',
    event: 'policy.updated',
    actor: byRoot,
    run: () =>
      form(`/databases/${ids.db}/policies/${ids.policy}/rules`, {
        table: 'public.users',
        column: 'email',
        action: 'hash',
      }),
    check: (s) => expect(s.after).toEqual({ 'rule public.users.email': { action: 'hash' } }),
  },
  {
    route: 'PUT /api/v1/desk/databases/:id/policies/:pid/assignments',
    event: 'policy.assigned',
    actor: byAdmin,
    run: () =>
      as(admin, 'PUT', `/api/v1/desk/databases/${ids.db}/policies/${ids.policy}/assignments`, {
        roles: ['member'],
      }),
    check: (s) => expect(s).toMatchObject({ before: { roles: [] }, after: { roles: ['member'] } }),
  },
  {
    route: 'POST /api/v1/desk/query-requests',
    event: 'query',
    actor: () => ({ user: member.id }),
    run: () =>
      as(member, 'POST', '/api/v1/desk/query-requests', { database_id: ids.db, statement: 'select 1' }).then(
        async (res) => {
          ids.request = ((await res.clone().json()) as { request: { id: string } }).request.id;
          return res;
        },
      ),
  },
  {
    route: 'POST /api/v1/desk/query-requests/:id/comments',
    event: 'review.commented',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/api/v1/desk/query-requests/${ids.request}/comments`, { comment: 'why?' }),
  },
  {
    route: 'POST /api/v1/desk/query-requests/:id/approve',
    event: 'review.approved',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/api/v1/desk/query-requests/${ids.request}/approve`, {}),
    check: (s) => expect(s.status).toBe('approved'),
  },
  {
    route: 'PATCH /api/v1/desk/query-requests/:id',
    event: 'review.edited',
    actor: () => ({ user: member.id }),
    run: () => as(member, 'PATCH', `/api/v1/desk/query-requests/${ids.request}`, { statement: 'select 2' }),
    check: (s) => {
      expect(s.approvals_voided).toBe(1);
      expect(s).toMatchObject({ before: { statement: 'select 1' }, after: { statement: 'select 2' } });
    },
  },
  {
    route: 'POST /api/v1/desk/query-requests/:id/reject',
    event: 'review.rejected',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/api/v1/desk/query-requests/${ids.request}/reject`, {}),
  },
  {
    route: 'POST /api/v1/desk/query-requests',
    event: 'query',
    actor: () => ({ user: member.id }),
    run: async () => {
      const res = await as(member, 'POST', '/api/v1/desk/query-requests', {
        database_id: ids.db,
        statement: 'select 3',
      });
      ids.request2 = (await json<{ request: { id: string } }>(res.clone())).request.id;
      return res;
    },
  },
  {
    route: 'POST /api/v1/desk/query-requests/:id/cancel',
    event: 'review.canceled',
    actor: () => ({ user: member.id }),
    run: () => as(member, 'POST', `/api/v1/desk/query-requests/${ids.request2}/cancel`, {}),
  },
  {
    route: 'DELETE /api/v1/desk/databases/:id/policies/:pid',
    event: 'policy.deleted',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/desk/databases/${ids.db}/policies/${ids.policy}`),
  },
  {
    route: 'POST /databases/:id/grants',
    event: 'database.grant_added',
    actor: byRoot,
    run: () => form(`/databases/${ids.db}/grants`, { user_id: admin.id }),
  },
  {
    route: 'DELETE /api/v1/desk/databases/:id/grants/:user_id',
    event: 'database.grant_removed',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/desk/databases/${ids.db}/grants/${member.id}`),
  },
  {
    route: 'POST /api/v1/api-keys',
    event: 'api_key.create',
    actor: byAdmin,
    run: async () => {
      const res = await as(admin, 'POST', '/api/v1/api-keys', { name: 'walk' });
      const body = (await res.clone().json()) as { id: string; key?: string; secret?: string };
      ids.key = body.id;
      secrets.push(String(body.key ?? body.secret));
      return res;
    },
  },
  {
    route: 'DELETE /api/v1/api-keys/:id',
    event: 'api_key.revoked',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/api-keys/${ids.key}`),
  },
  {
    route: 'POST /api/v1/agents',
    event: 'agent.registered',
    actor: byAdmin,
    run: async () => {
      const res = await as(admin, 'POST', '/api/v1/agents', { name: 'walk-edge' });
      const body = (await res.clone().json()) as { id: string; token: string };
      ids.agent = body.id;
      secrets.push(body.token);
      return res;
    },
  },
  {
    route: 'DELETE /api/v1/agents/:id',
    event: 'agent.revoked',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/agents/${ids.agent}`),
  },
  {
    route: 'POST /api/v1/tokens',
    event: 'token.created',
    actor: () => ({ user: member.id }),
    run: async () => {
      const res = await as(member, 'POST', '/api/v1/tokens', { name: 'walk' });
      const body = (await res.clone().json()) as { id: string; token: string };
      ids.token = body.id;
      secrets.push(body.token);
      return res;
    },
  },
  {
    route: 'DELETE /api/v1/tokens/:id',
    event: 'token.revoked',
    actor: () => ({ user: member.id }),
    run: () => as(member, 'DELETE', `/api/v1/tokens/${ids.token}`),
  },
  {
    route: 'POST /api/v1/workflows',
    event: 'workflow.created',
    actor: byAdmin,
    run: () =>
      as(admin, 'POST', '/api/v1/workflows', {
        name: 'walk',
        steps: [{ name: 'hello', action: { __type__: 'chat', chat_channel: '#general', message: 'hi' } }],
      }).then(keep('wf')),
  },
  {
    route: 'PATCH /api/v1/workflows/:id',
    event: 'workflow.updated',
    actor: byAdmin,
    run: () => as(admin, 'PATCH', `/api/v1/workflows/${ids.wf}`, { name: 'walk 2' }),
    check: (s) => expect(s).toMatchObject({ before: { name: 'walk' }, after: { name: 'walk 2' } }),
  },
  {
    route: 'DELETE /api/v1/workflows/:id',
    event: 'workflow.archived',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/workflows/${ids.wf}`),
  },
  {
    route: 'POST /v1/dashboards',
    event: 'dashboard.created',
    actor: byAdmin,
    run: () =>
      as(admin, 'POST', '/v1/dashboards', { name: 'walk', restricted_access: true }).then(keep('dash')),
  },
  {
    route: 'PUT /v1/dashboards/:id',
    event: 'dashboard.updated',
    actor: byAdmin,
    run: () => as(admin, 'PUT', `/v1/dashboards/${ids.dash}`, { name: 'walk 2' }),
  },
  {
    route: 'POST /v1/dashboards/:id/grants',
    event: 'dashboard.grant_added',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/v1/dashboards/${ids.dash}/grants`, { user_id: member.id }),
  },
  {
    route: 'DELETE /v1/dashboards/:id/grants/:userId',
    event: 'dashboard.grant_removed',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/v1/dashboards/${ids.dash}/grants/${member.id}`),
  },
  {
    route: 'POST /v1/dashboards/:id/archive',
    event: 'dashboard.archived',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/v1/dashboards/${ids.dash}/archive`),
  },
  {
    route: 'POST /v1/dashboards/:id/unarchive',
    event: 'dashboard.archived',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/v1/dashboards/${ids.dash}/unarchive`),
  },
  {
    route: 'POST /v1/dashboards/:id/role-grants',
    event: 'dashboard.grant_added',
    actor: byAdmin,
    run: () => as(admin, 'POST', `/v1/dashboards/${ids.dash}/role-grants`, { role: 'member' }),
    check: (s) => expect(s).toMatchObject({ dashboard_id: ids.dash, role: 'member' }),
  },
  {
    route: 'DELETE /v1/dashboards/:id/role-grants/:role',
    event: 'dashboard.grant_removed',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/v1/dashboards/${ids.dash}/role-grants/member`),
    check: (s) => expect(s).toMatchObject({ dashboard_id: ids.dash, role: 'member' }),
  },
  {
    route: 'POST /dashboards/new',
    event: 'dashboard.created',
    actor: byRoot,
    run: async () => {
      const res = await form('/dashboards/new', { name: 'walk page', restricted_access: 'true' });
      ids.pageDash = /\/dashboards\/([^/]+)\/edit/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
      return res;
    },
  },
  {
    route: 'POST /dashboards/:id/edit/settings',
    event: 'dashboard.updated',
    actor: byRoot,
    run: () =>
      form(`/dashboards/${ids.pageDash}/edit/settings`, { name: 'walk page 2', restricted_access: 'true' }),
  },
  {
    route: 'POST /dashboards/:id/edit/share',
    event: 'dashboard.grant_added',
    actor: byRoot,
    run: () => form(`/dashboards/${ids.pageDash}/edit/share`, { role: 'member' }),
  },
  {
    route: 'POST /dashboards/:id/edit/unshare',
    event: 'dashboard.grant_removed',
    actor: byRoot,
    run: () => form(`/dashboards/${ids.pageDash}/edit/unshare`, { role: 'member' }),
  },
  {
    route: 'POST /dashboards/:id/edit/panels',
    event: 'dashboard.updated',
    actor: byRoot,
    run: () =>
      form(`/dashboards/${ids.pageDash}/edit/panels`, {
        title: 'walk panel one',
        credential: ids.cred!,
        query: 'select 1 as n',
        view: 'table',
      }),
  },
  {
    route: 'POST /dashboards/:id/edit/panels',
    event: 'dashboard.updated',
    actor: byRoot,
    run: async () => {
      const res = await form(`/dashboards/${ids.pageDash}/edit/panels`, {
        title: 'walk panel two',
        credential: ids.cred!,
        query: 'select 2 as n',
        view: 'bar',
      });
      ids.pagePanel = /#panel-(.+)$/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
      return res;
    },
  },
  {
    route: 'POST /dashboards/:id/edit/panels/:panelId/move',
    event: 'dashboard.updated',
    actor: byRoot,
    run: () => form(`/dashboards/${ids.pageDash}/edit/panels/${ids.pagePanel}/move`, { dir: 'up' }),
  },
  {
    route: 'POST /dashboards/:id/edit/panels/:panelId/delete',
    event: 'dashboard.updated',
    actor: byRoot,
    run: () => form(`/dashboards/${ids.pageDash}/edit/panels/${ids.pagePanel}/delete`),
  },
  {
    route: 'POST /dashboards/:id/delete',
    event: 'dashboard.deleted',
    actor: byRoot,
    run: () => form(`/dashboards/${ids.pageDash}/delete`),
  },
  {
    route: 'DELETE /v1/dashboards/:id',
    event: 'dashboard.deleted',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/v1/dashboards/${ids.dash}`),
  },
  {
    route: 'POST /api/v1/users',
    event: 'user.created',
    actor: byAdmin,
    run: () =>
      as(admin, 'POST', '/api/v1/users', { email: 'walk@example.test', role: 'member' }).then(keep('user')),
  },
  {
    route: 'PATCH /api/v1/users/:id',
    event: 'user.role_changed',
    actor: byAdmin,
    run: () => as(admin, 'PATCH', `/api/v1/users/${ids.user}`, { role: 'admin' }),
  },
  {
    route: 'POST /people/:id/disable',
    event: 'user.disabled',
    actor: byRoot,
    run: () => form(`/people/${ids.user}/disable`),
  },
  {
    route: 'DELETE /api/v1/users/:id',
    event: 'user.deleted',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/users/${ids.user}`),
  },
  ...pageSteps({ world: () => w, member: () => member, form, ids, secrets }),
  {
    route: 'DELETE /api/v1/desk/databases/:id',
    event: 'database.deleted',
    actor: byAdmin,
    run: () => as(admin, 'DELETE', `/api/v1/desk/databases/${ids.db}`),
  },
];

/**
 * State-changing routes that this walk does not drive, each with why. A new route must be added
 * to STEPS or here, or the first test fails.
 */
const NOT_WALKED: Record<string, string> = {
  'POST /login': 'signs in: a session, not a change of the organization',
  'POST /logout': 'ends the caller’s own session',
  'POST /forgot-password': 'records user.password_reset_requested (test/identity/mail.test.ts)',
  'POST /api/v1/saved-queries': 'a person’s saved query: their workspace, not the organization’s settings',
  'PATCH /api/v1/saved-queries/:id':
    'a person’s saved query: their workspace, not the organization’s settings',
  'DELETE /api/v1/saved-queries/:id':
    'a person’s saved query: their workspace, not the organization’s settings',
  'POST /console/saved': 'a person’s saved query: their workspace, not the organization’s settings',
  'POST /console/saved/:id/delete':
    'a person’s saved query: their workspace, not the organization’s settings',
  'POST /set-password': 'records user.password_set (test/identity/people.test.ts)',
  'POST /api/v1/desk/query-requests/:id/undo':
    'records query_request.undo_requested with the new request (test/governance/undo.test.ts)',
  'POST /oauth/register': 'OAuth client registration (RFC 7591): no organization yet',
  'POST /oauth/authorize': 'a person’s consent to an AI client, for themselves',
  'POST /oauth/token': 'token exchange (RFC 6749): issues, changes no setting',
  'POST /oauth/revoke': 'a client revokes its own token (RFC 7009)',
  'POST /oauth/connections/:grantId/revoke': 'a person disconnects their own AI client',
  'POST /api/v1/workflows/validate': 'checks a definition, writes nothing',
  'POST /api/v1/workflows/:id/validate': 'checks a definition, writes nothing',
  'POST /api/v1/workflows/:id/run':
    'records run.started (test/workflows/run-audit.test.ts: the walk’s service has no Temporal worker)',
  'POST /api/v1/workflows/:id/runs/:runId/cancel': 'records run.canceled (test/workflows/run-audit.test.ts)',
  'POST /api/v1/workflows/:id/runs/:runId/retry': 'records run.retry (test/workflows/run-view.test.ts)',
  'POST /api/v1/workflows/:id/runs/:runId/rerun': 'records run.rerun (as the page route)',
  'POST /api/v1/workflows/:id/runs/:runId/approvals':
    'records run.approval_decided (test/workflows/run-audit.test.ts)',
  'POST /api/v1/integrations/tracker/webhook':
    'records run.started by the run, once per delivery (test/workflows/tracker.test.ts)',
  'POST /temporal/codec/encode': 'encodes payloads, writes nothing',
  'POST /temporal/codec/:namespace/encode': 'encodes payloads, writes nothing',
  'POST /temporal/codec/decode':
    'records temporal.payloads_decoded (test/workflows/payload-encryption.test.ts)',
  'POST /temporal/codec/:namespace/decode': 'records temporal.payloads_decoded (as above)',
  'POST /v1/dashboards/:id/panels/:panelId/run': 'runs a panel query: a query entry',
  'POST /v1/dashboards/:id/panels/:panelId/actions/:actionId/run':
    'a workflow action records run.started from its dashboard (test/dashboards/api.test.ts)',
  'POST /dashboards/:id/panels/:panelId/submit': 'runs a panel query: a query entry',
  'POST /dashboards/:id/edit/preview': 'runs a draft panel query as its editor: a query entry; saves nothing',
  'POST /dashboards/:id/panels/:panelId/actions/:actionId':
    'a workflow action records run.started from its dashboard (as the REST route)',
  'POST /console': 'runs a query: a query entry',
  'POST /workflows/:id/run': 'records run.started (test/workflows/run-audit.test.ts)',
  'POST /reviews/:id/run': 'a run is a query entry',
  'POST /reviews/:id/undo': 'the same domain function as the REST undo',
  'POST /runs/:workflowId/:runId/rerun': 'records run.rerun (test/workflows/run-view.test.ts)',
  'POST /runs/:workflowId/:runId/retry': 'records run.retry (the domain function of the REST route)',
  'POST /runs/:workflowId/:runId/cancel': 'records run.canceled (test/workflows/run-audit.test.ts)',
  'POST /runs/:workflowId/:runId/approvals':
    'records run.approval_decided, from the run page and the inbox (test/workflows/run-audit.test.ts)',
  'POST /settings/clients/:grantId/revoke': 'a person disconnects their own AI client',
  'POST /settings/sessions/:id/end': 'ends one of the caller’s own sessions',
  'POST /settings/sessions/end-others': 'ends the caller’s own other sessions',
  'POST /databases/:id/policies/preview':
    'records policy.previewed beside the query run as the person (test/browser/guidance.test.ts)',
  'POST /api/v1/desk/databases/:id/policies/preview':
    'records policy.previewed beside the query run as the person (test/browser/guidance.test.ts)',
  'POST /first-run/dismiss': 'a person hides their own first-run checklist: a preference, not a setting',
  'POST /databases/:id/credentials/:cid/check': 'checks a connection, writes nothing',
};

beforeAll(async () => {
  w = await startWorld();
  // The super admin: a restricted database stays visible to them after the walk restricts it.
  admin = w.root;
  member = await w.person('member', 'walk-member');
  page = await signIn(w.svc, w.svc.admin.email, w.svc.admin.password);
  secrets.push(w.svc.apiKey, w.svc.admin.password, servers().postgres.password, admin.token, member.token);
});
afterAll(async () => w?.stop());

async function head(): Promise<bigint> {
  const [row] = await w.svc.deps.sql<{ seq: bigint | null }[]>`
    select max(seq) as seq from audit_log where org_id = ${w.orgId}`;
  return row?.seq ?? 0n;
}

describe('every change of the organization is on the audit chain', () => {
  it('walks or names every state-changing route of the app', () => {
    const routes = new Set(
      createApp(w.svc.deps)
        .routes.filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))
        .map((r) => `${r.method} ${r.path}`),
    );
    const walked = new Set(STEPS.map((s) => s.route));
    const missing = [...routes].filter((r) => !walked.has(r) && !(r in NOT_WALKED));
    expect(missing).toEqual([]);
    // Both lists name only routes that exist.
    expect([...walked, ...Object.keys(NOT_WALKED)].filter((r) => !routes.has(r))).toEqual([]);
  });

  it('records exactly one event of its kind, by its actor, per change; the chain verifies', async () => {
    for (const step of STEPS) {
      const before = await head();
      const res = await step.run();
      expect(res.status, `${step.route}: ${await res.clone().text()}`).toBeLessThan(400);
      // A refused form answers 303 too, back to its page with an error flash.
      expect(res.headers.get('location') ?? '', step.route).not.toMatch(/[?&]error=/);
      await res.arrayBuffer().catch(() => undefined);
      const rows = await w.svc.deps.sql<
        {
          event: string;
          actor_user_id: string | null;
          actor_api_key_id: string | null;
          subject: Record<string, unknown>;
          request_id: string | null;
        }[]
      >`select event, actor_user_id, actor_api_key_id, subject, request_id from audit_log
        where org_id = ${w.orgId} and seq > ${before} order by seq`;
      expect(
        rows.map((r) => r.event),
        step.route,
      ).toEqual([step.event]);
      const who = step.actor();
      if (who.user) expect(rows[0]!.actor_user_id, step.route).toBe(who.user);
      if (who.key) expect(rows[0]!.actor_api_key_id, step.route).toMatch(/^key_/);
      step.check?.(rows[0]!.subject, rows[0]!);
    }
    expect(await verifyAuditChain(w.svc.deps.sql, w.orgId)).toMatchObject({ ok: true, broken: null });
  });

  it('never holds a password, API key, token or agent token in any entry', async () => {
    expect(secrets.filter((s) => s && s !== 'undefined').length).toBeGreaterThanOrEqual(7);
    const rows = await w.svc.deps.sql<{ t: string }[]>`
      select row_to_json(a)::text as t from audit_log a where org_id = ${w.orgId}`;
    const all = rows.map((r) => r.t).join('\n');
    for (const secret of secrets) expect(all.includes(secret), 'a secret is in the audit log').toBe(false);
    // The password change is named, never valued.
    expect(all).toContain('password');
  });
});
