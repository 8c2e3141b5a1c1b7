// Data-protection policies of a database in the web UI: the domain functions of
// /api/v1/desk/databases/:id/policies, plus the preview of what a person sees of a table.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import {
  createPolicy,
  deletePolicy,
  listPolicies,
  type PolicyView,
  patchPolicy,
  setAssignments,
} from '../../../governance/protection/policies.ts';
import { listPeople } from '../../../identity/directory.ts';
import { ROLES } from '../../../identity/people.ts';
import { getDatabase } from '../../../registry/databases.ts';
import { type PolicyPreview, previewPolicy, previewTables } from '../../../workspace/policy-preview.ts';
import { previewRowsAs, type RowsPreview } from '../../../workspace/preview-as.ts';
import {
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { PoliciesPage } from './view.tsx';

export function policyPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const here = (c: PageContext, pid?: string) =>
    `/databases/${c.req.param('id')}/policies${pid ? `/${pid}` : ''}`;
  const rulesOf = (view: PolicyView) =>
    view.rules.map((r) => ({
      schema: r.schema_name,
      table: r.table_name,
      column: r.column_name,
      action: r.action,
      keep_first: r.keep_first,
      keep_last: r.keep_last,
    }));

  app.get('/databases/:id/policies', (c) => page(c, null));
  // Sample rows as a person sees them: runs a query as them (audited), so a POST, not a link.
  app.post('/databases/:id/policies/preview', (c) => page(c, c.get('form').policy || null, true));
  app.get('/databases/:id/policies/:pid', (c) => page(c, c.req.param('pid')));

  app.post('/databases/:id/policies', async (c) => {
    // Checked by createPolicy with the schema the REST route uses (governance/protection/policies.ts).
    const out = await attempt(() =>
      createPolicy(deps.sql, pageCaller(c), c.req.param('id'), { name: c.get('form').name ?? '', rules: [] }),
    );
    return out.ok
      ? redirectWith(c, here(c, out.value.policy.id), 'notice', 'Policy created. Add rules, then assign it.')
      : redirectWith(c, here(c), 'error', out.error.detail);
  });

  app.post('/databases/:id/policies/:pid/rules', async (c) => {
    const f = c.get('form');
    // `schema.table`, or a table name alone (a rule for that table in any schema).
    const named = (f.table ?? '').trim();
    const dot = named.indexOf('.');
    const view = await find(c);
    if (!view) return redirectWith(c, here(c), 'error', 'No such policy.');
    const rule = {
      schema: dot < 0 ? null : named.slice(0, dot),
      table: dot < 0 ? named : named.slice(dot + 1),
      column: (f.column ?? '').trim(),
      action: f.action,
      keep_first: Number(f.keep_first || 0),
      keep_last: Number(f.keep_last || 0),
    };
    // The whole list, as PATCH of the policy takes it: patchPolicy checks it with that schema.
    return save(
      c,
      () =>
        patchPolicy(deps.sql, pageCaller(c), c.req.param('id'), view.policy.id, {
          rules: [...rulesOf(view), rule],
        }),
      'Rule added.',
    );
  });

  app.post('/databases/:id/policies/:pid/rules/:index/delete', async (c) => {
    const view = await find(c);
    if (!view) return redirectWith(c, here(c), 'error', 'No such policy.');
    const index = Number(c.req.param('index'));
    const rules = rulesOf(view).filter((_, i) => i !== index);
    return save(
      c,
      () => patchPolicy(deps.sql, pageCaller(c), c.req.param('id'), view.policy.id, { rules }),
      'Rule removed.',
    );
  });

  app.post('/databases/:id/policies/:pid/assignments', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const users = [body.users].flat().filter((u): u is string => typeof u === 'string');
    const roles = ROLES.filter((r) => c.get('form')[`role_${r}`] === 'on');
    return save(
      c,
      () => setAssignments(deps.sql, pageCaller(c), c.req.param('id'), c.req.param('pid'), { users, roles }),
      'Assignments saved.',
    );
  });

  app.post('/databases/:id/policies/:pid/delete', async (c) => {
    const out = await attempt(() =>
      deletePolicy(deps.sql, pageCaller(c), c.req.param('id'), c.req.param('pid')),
    );
    return out.ok
      ? redirectWith(c, here(c), 'notice', 'Policy deleted.')
      : redirectWith(c, here(c), 'error', out.error.detail);
  });

  async function find(c: PageContext): Promise<PolicyView | undefined> {
    const views = await listPolicies(deps.sql, c.get('principal').orgId, c.req.param('id') ?? '');
    return views.find((p) => p.policy.id === c.req.param('pid'));
  }

  async function save(c: PageContext, fn: () => Promise<unknown>, done: string) {
    const out = await attempt(fn);
    return redirectWith(
      c,
      here(c, c.req.param('pid')),
      out.ok ? 'notice' : 'error',
      out.ok ? done : out.error.detail,
    );
  }

  async function page(c: PageContext, pid: string | null, withRows = false) {
    const p = c.get('principal');
    const found = await attempt(() => getDatabase(deps.sql, pageCaller(c), c.req.param('id') ?? ''));
    if (!found.ok) return render(c, 'databases', 'Not found', <p class="error">No such database.</p>, 404);
    const { db, credentials } = found.value;
    const cred = credentials.find((x) => x.default_credential) ?? credentials[0];
    const policies = await listPolicies(deps.sql, p.orgId, db.id);
    const selected = pid ? (policies.find((x) => x.policy.id === pid) ?? null) : null;
    // The schema as the default credential sees it; a database that does not answer still lets
    // an admin edit rules by name.
    const tables = cred ? await previewTables(deps, db, cred).catch(() => []) : [];
    const people = await listPeople(deps.sql, pageCaller(c));
    let preview: PolicyPreview | null = null;
    let rows: RowsPreview | null = null;
    const as = withRows ? c.get('form').as : c.req.query('as');
    const tableName = withRows ? c.get('form').table : c.req.query('table');
    const person = people.find((u) => u.id === as);
    const table = tables.find((t) => `${t.schema}.${t.name}` === tableName);
    if (cred && person && table)
      preview = await previewPolicy(deps, {
        orgId: p.orgId,
        db,
        cred,
        person: { userId: person.id, role: person.role },
        table,
      });
    if (withRows && person && table)
      rows = await previewRowsAs(deps, pageCaller(c), {
        databaseId: db.id,
        userId: person.id,
        table: `${table.schema}.${table.name}`,
      });
    return render(
      c,
      'databases',
      `Data protection · ${db.name}`,
      <PoliciesPage
        db={db}
        policies={policies}
        people={people}
        tables={tables}
        selected={selected}
        preview={preview}
        rows={rows}
        previewFor={as && tableName ? { userId: as, table: tableName } : null}
        csrf={c.get('csrfToken')}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  }
  return app;
}
