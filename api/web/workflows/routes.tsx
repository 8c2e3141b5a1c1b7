// Workflow pages: the list, one workflow (start a run, archive), and the editor. The
// editor saves through POST/PATCH /api/v1/workflows with the session and its CSRF header, so a
// definition saved here is checked and stored exactly as one sent to the API.
import { Hono } from 'hono';
import {
  archiveWorkflow,
  findWorkflowDefinition,
  listWorkflowDefinitions,
} from '../../../automation/definitions.ts';
import { writeDelivery } from '../../../automation/delivery.ts';
import { presentWorkflow } from '../../../automation/present.ts';
import { startRun } from '../../../automation/runs.ts';
import type { Deps } from '../../../core/deps.ts';
import { mayRead, mayStart } from '../../../governance/workflow-access.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listDatabases } from '../../../registry/databases.ts';
import type { WorkflowRow } from '../../../store/workflows.ts';
import {
  adminPagesOnly,
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { RUN_STARTED_NOTICE } from '../runs/view.tsx';
import { WorkflowEditor } from './editor.tsx';
import { WorkflowList, WorkflowPage } from './view.tsx';

export function workflowPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const adminsOnly = adminPagesOnly('create and edit workflows', 'workflows');

  app.get('/workflows', async (c) => {
    const p = c.get('principal');
    const archived = c.req.query('archived') === '1';
    const all = await listWorkflowDefinitions(deps, pageCaller(c), { includeArchived: archived, limit: 500 });
    return render(
      c,
      'workflows',
      'Workflows',
      <WorkflowList
        workflows={all.filter((wf) => mayRead(p, wf))}
        canEdit={p.role !== 'member'}
        archived={archived}
        notice={c.req.query('notice')}
      />,
    );
  });

  app.get('/workflows/new', adminsOnly, async (c) => editorPage(c, null));

  app.get('/workflows/:id', async (c) => {
    const p = c.get('principal');
    const wf = await findWorkflowDefinition(deps, pageCaller(c), c.req.param('id'));
    // Someone who may not read its runs gets the 404 of a workflow that does not exist.
    if (!wf || !mayRead(p, wf))
      return render(c, 'workflows', 'Not found', <p class="error">No such workflow.</p>, 404);
    return render(
      c,
      'workflows',
      wf.name,
      <WorkflowPage
        wf={wf}
        canEdit={p.role !== 'member'}
        canRun={mayStart(p, wf)}
        csrf={c.get('csrfToken')}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  });

  app.get('/workflows/:id/edit', adminsOnly, async (c) => {
    const wf = await findWorkflowDefinition(deps, pageCaller(c), c.req.param('id'));
    if (!wf) return render(c, 'workflows', 'Not found', <p class="error">No such workflow.</p>, 404);
    return editorPage(c, wf);
  });

  // Form values are text: they are read by the inputs' types (`"42"` for an integer); an empty
  // field is left out so the input's default applies.
  app.post('/workflows/:id/run', async (c) => {
    const id = c.req.param('id');
    const inputs: Record<string, string> = {};
    for (const [k, value] of Object.entries(c.get('form')))
      if (k.startsWith('input.') && value !== '') inputs[k.slice(6)] = value;
    // Checked by startRun against the workflow's inputs, as POST /api/v1/workflows/:id/run is.
    const out = await attempt(() => startRun(deps, pageCaller(c), id, inputs, null, 'form'));
    if (!out.ok) return redirectWith(c, `/workflows/${id}`, 'error', out.error.detail);
    return redirectWith(c, `/runs/${id}/${out.value}`, 'notice', RUN_STARTED_NOTICE);
  });

  app.post('/workflows/:id/archive', adminsOnly, async (c) => {
    const id = c.req.param('id');
    const out = await attempt(() => archiveWorkflow(deps, pageCaller(c), id));
    if (!out.ok) return redirectWith(c, `/workflows/${id}`, 'error', out.error.detail);
    return redirectWith(c, '/workflows', 'notice', `Archived ${out.value.name}.`);
  });

  async function editorPage(c: PageContext, wf: WorkflowRow | null) {
    const [dbs, users, workflows] = await Promise.all([
      listDatabases(deps.sql, pageCaller(c), { limit: 500 }),
      listPeople(deps.sql, pageCaller(c)),
      listWorkflowDefinitions(deps, pageCaller(c), { includeArchived: false, limit: 500 }),
    ]);
    const credentials = await Promise.all(
      dbs.items.flatMap(({ db, credentials }) =>
        credentials.map(async (cr) => {
          // Where a write step would run at least once, the picker says so (automation/delivery.ts).
          const once =
            (await writeDelivery(deps, db, cr)) === 'at_least_once' ? ' (writes run at least once)' : '';
          return { id: cr.id, label: `${db.name} · ${cr.username}${once}` };
        }),
      ),
    );
    // A step may use a credential of a database this admin cannot see: keep it pickable by id.
    for (const { action: a } of wf?.steps ?? [])
      if (a.__type__ === 'query' && !credentials.some((cr) => cr.id === a.credential_id))
        credentials.push({ id: a.credential_id, label: `${a.credential_id} (not visible to you)` });
    const channels = new Set<string>();
    for (const { db } of dbs.items) if (db.slack_channel) channels.add(db.slack_channel);
    for (const w of workflows)
      for (const s of w.steps) if (s.action.__type__ === 'chat') channels.add(s.action.chat_channel);
    return render(
      c,
      'workflows',
      wf ? `Edit ${wf.name}` : 'New workflow',
      <WorkflowEditor
        workflow={wf ? presentWorkflow(wf) : null}
        credentials={credentials}
        channels={[...channels].sort()}
        people={users.filter((u) => !u.deleted_at).map((u) => ({ id: u.id, email: u.email }))}
        csrf={c.get('csrfToken')}
      />,
    );
  }
  return app;
}
