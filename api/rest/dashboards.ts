import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import {
  createDashboard,
  deleteDashboard,
  getDashboard,
  grantDashboard,
  listDashboards,
  listGrants,
  listRoleGrants,
  revokeDashboard,
  setDashboardArchived,
  shareWithRole,
  unshareRole,
  updateDashboard,
} from '../../dashboards/manage.ts';
import { findPanel, type PanelOutcome, runAction, runPanel } from '../../dashboards/run.ts';
import {
  CreateDashboard,
  GrantBody,
  ListDashboards,
  RoleGrantBody,
  RunActionBody,
  RunPanelBody,
  UpdateDashboard,
} from '../../dashboards/schema.ts';
import type { GovernanceDeps } from '../../governance/query.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import type { DashboardGrantRow, DashboardRoleGrantRow, DashboardRow } from '../../store/dashboards.ts';
import type { AppEnv } from '../env.ts';
import { forbidden } from '../errors.ts';
import { authenticate } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';

/**
 * SPEC.md 4.3 under /v1/dashboards, `Authorization: Bearer` with a personal access token acting
 * as its user (SPEC.md 5.2), plus list, archive/unarchive, grants and running panels and actions.
 */
export function dashboardRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['token']));
  const gov: GovernanceDeps = deps;
  const user = (c: Context<AppEnv>): UserPrincipal => {
    const p = c.get('principal');
    if (p.kind !== 'user') throw forbidden('dashboards act as a person: use a personal access token');
    return p;
  };

  app.get('/', doc('Dashboards', 'List dashboards', { auth: ['bearer'] }), async (c) => {
    const q = parseWith(ListDashboards, c.req.query());
    const page = await listDashboards(deps.sql, user(c), {
      includeArchived: q.include_archived === 'true',
      after: q.after,
      limit: q.limit,
    });
    return c.json({ data: page.items.map(presentDashboard), next_cursor: page.nextCursor });
  });
  app.post(
    '/',
    doc('Dashboards', 'Create a dashboard', { auth: ['bearer'], body: CreateDashboard, status: 201 }),
    async (c) => {
      const body = await jsonBody(c, CreateDashboard);
      return c.json(presentDashboard(await createDashboard(deps.sql, user(c), body)), 201);
    },
  );
  app.get('/:id', doc('Dashboards', 'Get a dashboard', { auth: ['bearer'] }), async (c) =>
    c.json(presentDashboard(await getDashboard(deps.sql, user(c), c.req.param('id')))),
  );
  app.put(
    '/:id',
    doc('Dashboards', 'Replace a dashboard', { auth: ['bearer'], body: UpdateDashboard }),
    async (c) => {
      const body = await jsonBody(c, UpdateDashboard);
      return c.json(presentDashboard(await updateDashboard(deps.sql, user(c), c.req.param('id'), body)));
    },
  );
  // SPEC.md 3: permanent; the deleted dashboard is returned, as DELETE of a database does.
  app.delete('/:id', doc('Dashboards', 'Delete a dashboard permanently', { auth: ['bearer'] }), async (c) =>
    c.json(presentDashboard(await deleteDashboard(deps.sql, user(c), c.req.param('id')))),
  );
  app.post(
    '/:id/archive',
    doc('Dashboards', 'Archive a dashboard (sets archived_at)', { auth: ['bearer'] }),
    async (c) =>
      c.json(presentDashboard(await setDashboardArchived(deps.sql, user(c), c.req.param('id'), true))),
  );
  app.post(
    '/:id/unarchive',
    doc('Dashboards', 'Unarchive a dashboard (clears archived_at)', { auth: ['bearer'] }),
    async (c) =>
      c.json(presentDashboard(await setDashboardArchived(deps.sql, user(c), c.req.param('id'), false))),
  );

  app.get(
    '/:id/grants',
    doc('Dashboards', 'List who may see a restricted dashboard', { auth: ['bearer'] }),
    async (c) => c.json({ data: (await listGrants(deps.sql, user(c), c.req.param('id'))).map(presentGrant) }),
  );
  app.post(
    '/:id/grants',
    doc('Dashboards', 'Grant a user access to a restricted dashboard', {
      auth: ['bearer'],
      body: GrantBody,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, GrantBody);
      const grants = await grantDashboard(deps.sql, user(c), c.req.param('id'), body.user_id);
      return c.json({ data: grants.map(presentGrant) });
    },
  );
  app.delete(
    '/:id/grants/:userId',
    doc('Dashboards', 'Remove a dashboard grant', { auth: ['bearer'] }),
    async (c) => {
      await revokeDashboard(deps.sql, user(c), c.req.param('id'), c.req.param('userId'));
      return c.body(null, 204);
    },
  );

  app.get(
    '/:id/role-grants',
    doc('Dashboards', 'List the roles a restricted dashboard is shared with', { auth: ['bearer'] }),
    async (c) =>
      c.json({ data: (await listRoleGrants(deps.sql, user(c), c.req.param('id'))).map(presentRoleGrant) }),
  );
  app.post(
    '/:id/role-grants',
    doc('Dashboards', 'Share a restricted dashboard with everyone holding a role', {
      auth: ['bearer'],
      body: RoleGrantBody,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, RoleGrantBody);
      const grants = await shareWithRole(deps.sql, user(c), c.req.param('id'), body.role);
      return c.json({ data: grants.map(presentRoleGrant) }, 201);
    },
  );
  app.delete(
    '/:id/role-grants/:role',
    doc('Dashboards', 'Stop sharing a restricted dashboard with a role', { auth: ['bearer'] }),
    async (c) => {
      await unshareRole(deps.sql, user(c), c.req.param('id'), c.req.param('role'));
      return c.body(null, 204);
    },
  );

  app.post(
    '/:id/panels/:panelId/run',
    doc('Dashboards', 'Run a query panel through the governed pipeline', {
      auth: ['bearer'],
      body: RunPanelBody,
    }),
    async (c) => {
      const body = await jsonBody(c, RunPanelBody);
      const v = user(c);
      const found = await findPanel(deps, v, c.req.param('id'), c.req.param('panelId'));
      const outcome = await runPanel(gov, v, { ...found, mode: 'submit', inputs: body.inputs });
      return c.json(presentOutcome(outcome), outcome.status === 'executed' ? 200 : 202);
    },
  );
  app.post(
    '/:id/panels/:panelId/actions/:actionId/run',
    doc('Dashboards', 'Run a panel row action (starts its workflow)', {
      auth: ['bearer'],
      body: RunActionBody,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, RunActionBody);
      const ref = {
        dashboardId: c.req.param('id'),
        panelId: c.req.param('panelId'),
        actionId: c.req.param('actionId'),
      };
      const { runId, workflowId } = await runAction(deps, user(c), ref, body.row);
      c.header('location', `/api/v1/workflows/${workflowId}/runs/${runId}`);
      return c.json(
        { run_id: runId, workflow_id: workflowId, url: `${deps.config.baseUrl}/runs/${workflowId}/${runId}` },
        201,
      );
    },
  );
  return app;
}

/** The governance dependencies of a request: pools read when used, reviewers told of new requests. */
/** SPEC.md 2.3 dashboard object. */
export function presentDashboard(d: DashboardRow) {
  return {
    id: d.id,
    name: d.name,
    restricted_access: d.restricted_access,
    archived_at: d.archived_at?.toISOString() ?? null,
    panels: d.panels,
    created_by: d.created_by,
    inserted_at: d.inserted_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  };
}

function presentGrant(g: DashboardGrantRow) {
  return {
    user_id: g.user_id,
    email: g.email,
    granted_by: g.granted_by,
    created_at: g.created_at.toISOString(),
  };
}

function presentRoleGrant(g: DashboardRoleGrantRow) {
  return { role: g.role, granted_by: g.granted_by, created_at: g.created_at.toISOString() };
}

function presentOutcome(o: PanelOutcome) {
  if (o.status === 'executed') {
    const r = o.result;
    return {
      status: o.status,
      request_id: o.requestId,
      result: { columns: r.columns, rows: r.rows, num_rows: r.num_rows, truncated: r.truncated },
    };
  }
  return {
    status: o.status,
    request_id: o.status === 'pending_review' ? o.requestId : null,
    reviews_required: o.reviewsRequired,
    result: null,
  };
}
