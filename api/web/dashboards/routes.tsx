// The dashboards pages: the list, one dashboard with its panels, panel submits and row actions.
import { Hono } from 'hono';
import { findWorkflowDefinition } from '../../../automation/definitions.ts';
import type { Deps } from '../../../core/deps.ts';
import { getDashboard, listDashboards } from '../../../dashboards/manage.ts';
import { runAction, runPanel } from '../../../dashboards/run.ts';
import type { GovernanceDeps } from '../../../governance/query.ts';
import { mayStart } from '../../../governance/workflow-access.ts';
import { attempt, messageOf, type PageEnv, pageCaller, redirectWith, render } from '../kit/page-context.tsx';
import { dashboardBuilderRoutes } from './builder-routes.tsx';
import { DashboardList, DashboardPage, inputField, type PanelView } from './view.tsx';

export function dashboardPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const gov: GovernanceDeps = deps;
  // Before /dashboards/:id, so /dashboards/new is the builder and not a dashboard named "new".
  app.route('/', dashboardBuilderRoutes(deps));
  app.get('/dashboards', async (c) => {
    const archived = c.req.query('archived') === '1';
    const page = await listDashboards(deps.sql, c.get('principal'), {
      includeArchived: archived,
      limit: 200,
    });
    return render(
      c,
      'dashboards',
      'Dashboards',
      <DashboardList dashboards={page.items} archived={archived} notice={c.req.query('notice')} />,
    );
  });

  app.get('/dashboards/:id', async (c) => {
    const v = c.get('principal');
    const found = await attempt(() => getDashboard(deps.sql, v, c.req.param('id')));
    if (!found.ok)
      return render(c, 'dashboards', 'Not found', <p class="error">{found.error.detail}</p>, 404);
    const dashboard = found.value;
    const query = c.req.query();
    const panels: PanelView[] = await Promise.all(
      dashboard.panels.map(async (panel): Promise<PanelView> => {
        const values: Record<string, string> = {};
        for (const i of panel.inputs) {
          const value = query[inputField(panel.id, i.key)];
          if (value !== undefined) values[i.key] = value;
        }
        if (Object.keys(values).length < panel.inputs.length)
          return { panel, values, state: { status: 'awaiting_inputs' } };
        // A page view never opens a query request: 'view' answers review_required instead.
        const ran = await attempt(() => runPanel(gov, v, { dashboard, panel, mode: 'view', inputs: values }));
        if (ran.ok) return { panel, values, state: ran.value };
        // Access answers an unreachable database or credential as not found (it does not say
        // which exist); on a panel someone shared, that reads as a broken panel, not as access.
        const message =
          ran.error.status === 404
            ? "This panel's database or credential is not open to you: ask the dashboard's owner or an admin for access."
            : ran.error.detail;
        return { panel, values, state: { status: 'error', message } };
      }),
    );
    const workflowNames: Record<string, string> = {};
    for (const id of new Set(
      dashboard.panels.flatMap((p) => p.actions.flatMap((a) => (a.workflow_id ? [a.workflow_id] : []))),
    )) {
      const wf = await findWorkflowDefinition(deps, pageCaller(c), id);
      // Only workflows the viewer may start get a button (run_permissions, governance/workflow-access.ts).
      if (wf && mayStart(v, wf)) workflowNames[id] = wf.name;
    }
    return render(
      c,
      'dashboards',
      dashboard.name,
      <DashboardPage
        dashboard={dashboard}
        panels={panels}
        csrf={c.get('csrfToken')}
        workflowNames={workflowNames}
        // The same rule as requireEditor (governance/dashboard-access.ts), only to offer the link.
        canEdit={v.role !== 'member' || dashboard.created_by === v.userId}
        notice={query.notice}
        error={query.error}
      />,
    );
  });

  app.post('/dashboards/:id/panels/:panelId/submit', async (c) => {
    const v = c.get('principal');
    const form = c.get('form');
    // Back to the page as it was: every panel's input values (only input fields are kept).
    const back = new URLSearchParams(
      [...new URLSearchParams(form.back ?? '')].filter(([k]) => k !== 'notice' && k !== 'error'),
    );
    const inputs: Record<string, string> = {};
    for (const [k, value] of Object.entries(form)) {
      if (!k.startsWith('in.')) continue;
      inputs[k.slice(3)] = value;
      back.set(inputField(c.req.param('panelId'), k.slice(3)), value);
    }
    const page = `/dashboards/${c.req.param('id')}?${back}`;
    const out = await attempt(async () => {
      const dashboard = await getDashboard(deps.sql, v, c.req.param('id'));
      const panel = dashboard.panels.find((p) => p.id === c.req.param('panelId'));
      if (!panel) throw new Error('no such panel');
      return runPanel(gov, v, { dashboard, panel, mode: 'submit', inputs });
    });
    if (!out.ok) return redirectWith(c, page, 'error', out.error.detail);
    const note =
      out.value.status === 'pending_review'
        ? `Submitted for review as ${out.value.requestId}.`
        : 'The query ran.';
    return redirectWith(c, page, 'notice', note);
  });

  app.post('/dashboards/:id/panels/:panelId/actions/:actionId', async (c) => {
    const row: Record<string, string> = {};
    for (const [k, value] of Object.entries(c.get('form'))) if (k.startsWith('row.')) row[k.slice(4)] = value;
    const ref = {
      dashboardId: c.req.param('id'),
      panelId: c.req.param('panelId'),
      actionId: c.req.param('actionId'),
    };
    const out = await attempt(() => runAction(deps, c.get('principal'), ref, row));
    if (!out.ok) return redirectWith(c, `/dashboards/${ref.dashboardId}`, 'error', messageOf(out.error));
    return redirectWith(
      c,
      `/runs/${out.value.workflowId}/${out.value.runId}`,
      'notice',
      'The workflow run started.',
    );
  });
  return app;
}
