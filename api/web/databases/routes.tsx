// The Databases pages: the same domain functions and validation schemas as
// /api/v1/desk/databases, driven by forms. Registering, editing and deleting need an admin.
import { Hono } from 'hono';
import * as v from 'valibot';
import type { Deps } from '../../../core/deps.ts';
import type { AppError } from '../../../core/errors.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listAgents } from '../../../registry/agents.ts';
import { checkConnection } from '../../../registry/check-connection.ts';
import { CreateDatabase, PatchDatabase } from '../../../registry/database-input.ts';
import { deleteDatabase, getDatabase, listDatabases, patchDatabase } from '../../../registry/databases.ts';
import {
  grantAccess,
  grantCredential,
  listCredentialAccess,
  listDatabaseGrants,
  revokeAccess,
  revokeCredentialGrant,
} from '../../../registry/grants.ts';
import { registerDatabase } from '../../../registry/register.ts';
import type { Role } from '../../../store/users.ts';
import {
  adminPagesOnly,
  attempt,
  type PageContext,
  type PageEnv,
  pageCaller,
  redirectWith,
  render,
} from '../kit/page-context.tsx';
import { policyPageRoutes } from '../policies/routes.tsx';
import type { FieldErrors } from './fields.tsx';
import {
  createBodyFromForm,
  credentialPatchFromForm,
  fieldOf,
  type Posted,
  patchBodyFromForm,
} from './form.ts';
import { DatabaseDetail, DatabaseList, NewDatabase } from './view.tsx';

export function databasePageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const agentsOf = async (orgId: string) =>
    (await listAgents(deps, orgId)).filter((a) => !a.revoked).map((a) => ({ id: a.id, name: a.name }));

  app.get('/databases', async (c) => {
    const p = c.get('principal');
    const group = c.req.query('group') || undefined;
    const all = await listDatabases(deps.sql, pageCaller(c), { limit: 200 });
    const groups = [
      ...new Set(all.items.map((i) => i.db.group_name).filter((g): g is string => Boolean(g))),
    ].sort();
    return render(
      c,
      'databases',
      'Databases',
      <DatabaseList
        items={group ? all.items.filter((i) => i.db.group_name === group) : all.items}
        groups={groups}
        group={group}
        isAdmin={p.role !== 'member'}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  });

  // Everything below manages databases: admins only.
  app.use('/databases/*', adminPagesOnly('manage databases', 'databases'));

  app.get('/databases/new', async (c) => newPage(c, {}, {}));
  app.route('/', policyPageRoutes(deps));

  app.post('/databases', async (c) => {
    const form = await posted(c);
    const parsed = v.safeParse(CreateDatabase, createBodyFromForm(form));
    if (!parsed.success) return newPage(c, form, issuesOf(parsed.issues), 422);
    const out = await attempt(() =>
      registerDatabase(deps, pageCaller(c), parsed.output, {
        saveAnyway: form.save_anyway === 'on',
      }),
    );
    if (!out.ok) return newPage(c, form, errorsOf(out.error), 422);
    if (!out.value.saved) {
      const errors: FieldErrors = {};
      for (const f of out.value.failures) errors[`c${f.index}_password`] = f.message;
      return newPage(c, form, errors, 422, true);
    }
    const { db } = out.value.value;
    return redirectWith(c, `/databases/${db.id}`, 'notice', `Registered ${db.name}.`);
  });

  app.get('/databases/:id', (c) => detailPage(c, {}));

  app.post('/databases/:id', async (c) => {
    const parsed = v.safeParse(PatchDatabase, patchBodyFromForm(await posted(c)));
    if (!parsed.success) return detailPage(c, { errors: issuesOf(parsed.issues) }, 422);
    return change(
      c,
      () => patchDatabase(deps, pageCaller(c), c.req.param('id'), parsed.output),
      'Settings saved.',
    );
  });

  app.post('/databases/:id/delete', async (c) => {
    const found = await attempt(() => getDatabase(deps.sql, pageCaller(c), c.req.param('id')));
    if (!found.ok) return redirectWith(c, '/databases', 'error', found.error.detail);
    if ((c.get('form').confirm ?? '').trim() !== found.value.db.name)
      return redirectWith(
        c,
        `/databases/${found.value.db.id}`,
        'error',
        'The name you typed does not match; nothing was deleted.',
      );
    const out = await attempt(() => deleteDatabase(deps, pageCaller(c), found.value.db.id));
    return out.ok
      ? redirectWith(c, '/databases', 'notice', `Deleted ${found.value.db.name}.`)
      : redirectWith(c, `/databases/${found.value.db.id}`, 'error', out.error.detail);
  });

  app.post('/databases/:id/credentials', (c) => credentialChange(c, null));
  app.post('/databases/:id/credentials/:cid', (c) => credentialChange(c, c.req.param('cid')));
  app.post('/databases/:id/credentials/:cid/delete', (c) =>
    change(
      c,
      () =>
        patchDatabase(deps, pageCaller(c), c.req.param('id'), {
          credentials: [{ id: c.req.param('cid'), delete: true }],
        }),
      'Credential removed.',
    ),
  );

  // SPEC.md 7: the server's own message, shown beside the credential.
  app.post('/databases/:id/credentials/:cid/check', async (c) => {
    const found = await attempt(() => getDatabase(deps.sql, pageCaller(c), c.req.param('id')));
    const cred = found.ok ? found.value.credentials.find((x) => x.id === c.req.param('cid')) : undefined;
    if (!cred) return redirectWith(c, '/databases', 'error', 'No such credential.');
    const message =
      (await checkConnection(deps, pageCaller(c), c.req.param('id'), cred.username)) ?? 'not found';
    return detailPage(c, { checked: { credentialId: cred.id, message } });
  });

  app.post('/databases/:id/credentials/:cid/grants', async (c) => {
    const [kind, value] = (c.get('form').grantee ?? '').split(':');
    // Checked by grantCredential with the schema the REST route uses (registry/grants.ts).
    const to = kind === 'role' ? { role: value as Role } : { user_id: value ?? '' };
    return change(c, () => grantCredential(deps.sql, pageCaller(c), target(c), to), 'Granted.');
  });
  app.post('/databases/:id/credentials/:cid/grants/:gid/delete', (c) =>
    change(
      c,
      () => revokeCredentialGrant(deps.sql, pageCaller(c), target(c), c.req.param('gid')),
      'Grant removed.',
    ),
  );
  app.post('/databases/:id/grants', (c) =>
    change(
      c,
      () =>
        grantAccess(deps.sql, pageCaller(c), c.req.param('id'), {
          user_id: c.get('form').user_id ?? '',
        }),
      'Access granted.',
    ),
  );
  app.post('/databases/:id/grants/:userId/delete', (c) =>
    change(
      c,
      () => revokeAccess(deps.sql, pageCaller(c), c.req.param('id'), c.req.param('userId')),
      'Access revoked.',
    ),
  );

  const target = (c: PageContext) => ({
    databaseId: c.req.param('id') ?? '',
    credentialId: c.req.param('cid') ?? '',
  });

  async function credentialChange(c: PageContext, id: string | null) {
    const entry = credentialPatchFromForm(await posted(c), id);
    const parsed = v.safeParse(PatchDatabase, { credentials: [entry] });
    // The errors go to this credential's form (or the add form), opened, and to no other.
    const erred = id ?? 'new';
    if (!parsed.success) return detailPage(c, { errors: issuesOf(parsed.issues, true), erred }, 422);
    return change(
      c,
      () => patchDatabase(deps, pageCaller(c), c.req.param('id') ?? '', parsed.output),
      id ? 'Credential saved.' : 'Credential added.',
      erred,
    );
  }

  /** Runs a change, then back to the database page with what happened (Post/Redirect/Get). */
  /** `erred`: the credential form a refusal's field errors belong to (null: the page's others). */
  async function change(
    c: PageContext,
    fn: () => Promise<unknown>,
    done: string,
    erred: string | null = null,
  ) {
    const out = await attempt(fn);
    const page = `/databases/${c.req.param('id')}`;
    if (out.ok) return redirectWith(c, page, 'notice', done);
    if (out.error.errors) return detailPage(c, { errors: errorsOf(out.error, erred !== null), erred }, 422);
    return redirectWith(c, page, 'error', out.error.detail);
  }

  async function newPage(
    c: PageContext,
    form: Posted,
    errors: FieldErrors,
    status: 200 | 422 = 200,
    checkFailed = false,
  ) {
    const p = c.get('principal');
    const people = await listPeople(deps.sql, pageCaller(c));
    return render(
      c,
      'databases',
      'Register a database',
      <NewDatabase
        form={form}
        fresh={c.req.method === 'GET'}
        errors={errors}
        checkFailed={checkFailed}
        audience={{
          me: p.email,
          superAdmins: people
            .filter((u) => u.role === 'super_admin' && u.id !== p.userId)
            .map((u) => u.email),
          everyone: people.length,
        }}
        agents={await agentsOf(p.orgId)}
        csrf={c.get('csrfToken')}
      />,
      status,
    );
  }

  async function detailPage(
    c: PageContext,
    extra: {
      errors?: FieldErrors;
      erred?: string | null;
      checked?: { credentialId: string; message: string };
    },
    status: 200 | 422 = 200,
  ) {
    const p = c.get('principal');
    const found = await attempt(() => getDatabase(deps.sql, pageCaller(c), c.req.param('id') ?? ''));
    if (!found.ok) return render(c, 'databases', 'Not found', <p class="error">No such database.</p>, 404);
    const { db, credentials } = found.value;
    const credentialGrants = Object.fromEntries(
      await Promise.all(
        credentials.map(
          async (cr) =>
            [cr.id, (await listCredentialAccess(deps.sql, pageCaller(c), db.id, cr.id)).grants] as const,
        ),
      ),
    );
    return render(
      c,
      'databases',
      db.name,
      <DatabaseDetail
        db={db}
        credentials={credentials}
        credentialGrants={credentialGrants}
        grants={db.restrict_access ? await listDatabaseGrants(deps.sql, pageCaller(c), db.id) : []}
        people={await listPeople(deps.sql, pageCaller(c))}
        agents={await agentsOf(p.orgId)}
        errors={extra.errors ?? {}}
        erred={extra.erred ?? null}
        csrf={c.get('csrfToken')}
        checked={extra.checked}
        notice={c.req.query('notice')}
        error={extra.errors ? 'Nothing was saved: correct the fields marked below.' : c.req.query('error')}
      />,
      status,
    );
  }
  return app;
}

/** The form with uploaded certificate files read as text (pageSession kept only the text fields). */
async function posted(c: PageContext): Promise<Posted> {
  const form: Posted = { ...c.get('form') };
  const body = await c.req.parseBody();
  for (const [k, value] of Object.entries(body)) {
    if (value instanceof File && value.size > 0) form[k] = await value.text();
  }
  return form;
}

function issuesOf(issues: v.BaseIssue<unknown>[], credentialForm = false): FieldErrors {
  const out: FieldErrors = {};
  for (const i of issues) out[fieldOf(v.getDotPath(i) ?? '', credentialForm)] ??= i.message;
  return out;
}

function errorsOf(err: AppError, credentialForm = false): FieldErrors {
  const out: FieldErrors = {};
  for (const e of err.errors ?? [{ path: '', message: err.detail }])
    out[fieldOf(e.path, credentialForm)] ??= e.message;
  return out;
}
