// The dashboard builder's pages: create, settings, one panel at a time (preview, save, move,
// delete), sharing and deleting. Each change calls a dashboards/ domain function, which checks
// the input with the REST schema and records the dashboard's audit event.
import { Hono } from 'hono';
import * as v from 'valibot';
import { listWorkflowDefinitions } from '../../../automation/definitions.ts';
import type { Deps } from '../../../core/deps.ts';
import type { AppError, FieldError } from '../../../core/errors.ts';
import { parseInput } from '../../../core/input.ts';
import { movePanel, panelIndex, removePanel, savePanel } from '../../../dashboards/edit.ts';
import {
  createDashboard,
  deleteDashboard,
  getDashboard,
  grantDashboard,
  listGrants,
  listRoleGrants,
  revokeDashboard,
  shareWithRole,
  unshareRole,
  updateDashboard,
} from '../../../dashboards/manage.ts';
import { runPanel } from '../../../dashboards/run.ts';
import { CreateDashboard, PanelBody, RoleGrantBody, UpdateDashboard } from '../../../dashboards/schema.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listDatabases } from '../../../registry/databases.ts';
import type { DashboardRow } from '../../../store/dashboards.ts';
import {
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { BuilderPage, NewDashboardPage } from './builder-view.tsx';
import type { PanelEditor } from './panel-editor-view.tsx';
import { previewPanel } from './panel-editor-view.tsx';
import { bodyOfDraft, draftFromForm, draftOfPanel, EMPTY_DRAFT, samplesFromForm } from './panel-form.ts';

/** The settings fields as the REST body has them: `restricted_access` is a boolean there. */
const settingsOf = (form: Record<string, string>) => ({
  name: form.name ?? '',
  restricted_access: form.restricted_access === 'true',
});

export function dashboardBuilderRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const edit = (id: string) => `/dashboards/${id}/edit`;

  app.get('/dashboards/new', (c) =>
    render(
      c,
      'dashboards',
      'New dashboard',
      <NewDashboardPage csrf={c.get('csrfToken')} name="" restricted />,
    ),
  );
  app.post('/dashboards/new', async (c) => {
    const fields = settingsOf(c.get('form'));
    const made = await attempt(() =>
      createDashboard(deps.sql, c.get('principal'), parseInput(CreateDashboard, fields)),
    );
    if (!made.ok)
      return render(
        c,
        'dashboards',
        'New dashboard',
        <NewDashboardPage
          csrf={c.get('csrfToken')}
          name={fields.name}
          restricted={fields.restricted_access}
          error={made.error.detail}
        />,
        422,
      );
    return redirectWith(
      c,
      `${edit(made.value.id)}#panel-editor`,
      'notice',
      'Dashboard created: add its first panel.',
    );
  });

  app.get('/dashboards/:id/edit', async (c) => {
    const id = c.req.param('id');
    const found = await attempt(() => editable(c, id));
    if (!found.ok) return notFoundPage(c, found.error);
    const d = found.value;
    const wanted = c.req.query('panel');
    const panel = wanted ? d.panels.find((p) => p.id === wanted) : undefined;
    const draft = panel ? draftOfPanel(panel) : EMPTY_DRAFT;
    // An existing panel without inputs previews at once: its columns fill the mapping lists.
    const preview = panel && panel.inputs.length === 0 ? await runPreview(c, d, draft, {}) : null;
    return builder(c, d, { panelId: panel?.id ?? null, draft, samples: {}, errors: [], preview });
  });

  app.post('/dashboards/:id/edit/settings', async (c) => {
    const id = c.req.param('id');
    const out = await attempt(() =>
      updateDashboard(
        deps.sql,
        c.get('principal'),
        id,
        parseInput(UpdateDashboard, settingsOf(c.get('form'))),
      ),
    );
    return out.ok
      ? redirectWith(c, edit(id), 'notice', 'Settings saved.')
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  app.post('/dashboards/:id/edit/preview', async (c) => {
    // Only an editor previews: the draft runs only after that check.
    const found = await attempt(() => editable(c, c.req.param('id')));
    if (!found.ok) return notFoundPage(c, found.error);
    const form = c.get('form');
    const draft = draftFromForm(form);
    const samples = samplesFromForm(form, draft);
    const checked = v.safeParse(PanelBody, bodyOfDraft(draft));
    const errors: FieldError[] = checked.success
      ? []
      : checked.issues.map((i) => ({ path: v.getDotPath(i) ?? '', message: i.message }));
    const preview = checked.success ? await runPreview(c, found.value, draft, samples) : null;
    return builder(c, found.value, {
      panelId: form.panel || null,
      draft,
      samples,
      errors,
      preview,
      previewed: true,
    });
  });

  app.post('/dashboards/:id/edit/panels', async (c) => {
    const id = c.req.param('id');
    const form = c.get('form');
    const draft = draftFromForm(form);
    const panelId = form.panel || null;
    const saved = await attempt(() =>
      savePanel(deps.sql, c.get('principal'), id, panelId, bodyOfDraft(draft)),
    );
    // Saved, the panel takes its place in the list and the form below starts the next one: a
    // form still holding the saved panel was filled again as if new, and overwrote it.
    if (saved.ok)
      return redirectWith(
        c,
        `${edit(id)}#panel-${saved.value.panel.id}`,
        'notice',
        `Panel “${saved.value.panel.title || 'Untitled panel'}” saved.`,
      );
    const found = await attempt(() => getDashboard(deps.sql, c.get('principal'), id));
    if (!found.ok) return notFoundPage(c, found.error);
    // The 422 names `panels.<index>.…`: this panel's fields are shown beside them.
    const prefix = `panels.${panelIndex(found.value, panelId)}.`;
    const errors = (saved.error.errors ?? [{ path: '', message: saved.error.detail }]).map((e) => ({
      path: e.path.startsWith(prefix) ? e.path.slice(prefix.length) : e.path,
      message: e.message,
    }));
    const editor = { panelId, draft, samples: samplesFromForm(form, draft), errors, preview: null };
    return builder(c, found.value, editor, 422);
  });

  app.post('/dashboards/:id/edit/panels/:panelId/move', async (c) => {
    const id = c.req.param('id');
    const by = c.get('form').dir === 'up' ? -1 : 1;
    const out = await attempt(() => movePanel(deps.sql, c.get('principal'), id, c.req.param('panelId'), by));
    return out.ok
      ? redirectWith(c, `${edit(id)}#panels-heading`, 'notice', `Panel moved ${by < 0 ? 'up' : 'down'}.`)
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  app.post('/dashboards/:id/edit/panels/:panelId/delete', async (c) => {
    const id = c.req.param('id');
    const out = await attempt(() => removePanel(deps.sql, c.get('principal'), id, c.req.param('panelId')));
    return out.ok
      ? redirectWith(c, edit(id), 'notice', 'Panel deleted.')
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  app.post('/dashboards/:id/edit/share', async (c) => {
    const id = c.req.param('id');
    const form = c.get('form');
    const v = c.get('principal');
    const out = await attempt(async () => {
      if (form.role !== undefined) {
        const { role } = parseInput(RoleGrantBody, { role: form.role });
        await shareWithRole(deps.sql, v, id, role);
        return `Shared with everyone with the ${role} role.`;
      }
      await grantDashboard(deps.sql, v, id, form.user_id ?? '');
      return 'Shared with the person.';
    });
    return out.ok
      ? redirectWith(c, edit(id), 'notice', out.value)
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  app.post('/dashboards/:id/edit/unshare', async (c) => {
    const id = c.req.param('id');
    const form = c.get('form');
    const v = c.get('principal');
    const out = await attempt(() =>
      form.role !== undefined
        ? unshareRole(deps.sql, v, id, form.role)
        : revokeDashboard(deps.sql, v, id, form.user_id ?? ''),
    );
    return out.ok
      ? redirectWith(c, edit(id), 'notice', 'No longer shared.')
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  app.post('/dashboards/:id/delete', async (c) => {
    const id = c.req.param('id');
    const out = await attempt(() => deleteDashboard(deps.sql, c.get('principal'), id));
    return out.ok
      ? redirectWith(c, '/dashboards', 'notice', `Dashboard “${out.value.name}” deleted.`)
      : redirectWith(c, edit(id), 'error', out.error.detail);
  });

  /** The dashboard if the person may change it (listing its grants asks requireEditor), else 403/404. */
  async function editable(c: PageContext, id: string): Promise<DashboardRow> {
    const d = await getDashboard(deps.sql, c.get('principal'), id);
    await listGrants(deps.sql, c.get('principal'), d.id);
    return d;
  }

  /** Runs the draft as the editor, never opening a query request ('view'), read-only like a panel. */
  async function runPreview(
    c: PageContext,
    d: DashboardRow,
    draft: typeof EMPTY_DRAFT,
    samples: Record<string, string>,
  ) {
    const ran = await attempt(() =>
      runPanel(deps, c.get('principal'), {
        dashboard: d,
        panel: previewPanel(draft),
        mode: 'view',
        inputs: samples,
      }),
    );
    return ran.ok ? ran.value : { status: 'error' as const, message: ran.error.detail };
  }

  async function builder(c: PageContext, d: DashboardRow, editor: PanelEditor, status: 200 | 422 = 200) {
    const v = c.get('principal');
    // Only an editor gets the builder: listing the grants asks the same question as saving.
    const grants = await attempt(() => listGrants(deps.sql, v, d.id));
    if (!grants.ok) return notFoundPage(c, grants.error);
    const [roles, dbs, workflows, people] = await Promise.all([
      listRoleGrants(deps.sql, v, d.id),
      listDatabases(deps.sql, pageCaller(c), { limit: 200 }),
      listWorkflowDefinitions(deps, pageCaller(c), { includeArchived: false, limit: 200 }),
      listPeople(deps.sql, pageCaller(c)),
    ]);
    const choices = {
      credentials: dbs.items.flatMap(({ db, credentials }) =>
        credentials.map((cred) => ({ id: cred.id, label: `${db.name} as ${cred.username}` })),
      ),
      workflows: workflows.map((w) => ({
        id: w.id,
        name: w.name,
        inputs: w.inputs.map((i) => ({ key: i.key, type: i.type })),
      })),
      people: people
        .filter((p) => !p.deleted_at && p.id !== v.userId)
        .map((p) => ({ id: p.id, email: p.email })),
    };
    const query = c.req.method === 'GET' ? c.req.query() : {};
    return render(
      c,
      'dashboards',
      `Edit ${d.name}`,
      <BuilderPage
        dashboard={d}
        csrf={c.get('csrfToken')}
        choices={choices}
        roles={roles.map((r) => r.role)}
        grants={grants.value.map((g) => ({ user_id: g.user_id, email: g.email }))}
        editor={editor}
        notice={query.notice}
        error={query.error}
      />,
      status,
    );
  }

  function notFoundPage(c: PageContext, error: AppError) {
    const status = error.status === 403 ? 403 : 404;
    return render(
      c,
      'dashboards',
      status === 403 ? 'Not allowed' : 'Not found',
      <p class="error">{error.detail}</p>,
      status,
    );
  }
  return app;
}
