import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import {
  CreatePolicy,
  createPolicy,
  deletePolicy,
  getPolicy,
  listPolicies,
  PatchPolicy,
  type PolicyView,
  PutAssignments,
  patchPolicy,
  setAssignments,
} from '../../governance/protection/policies.ts';
import { PreviewAs, previewRowsAs } from '../../workspace/preview-as.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';

/**
 * Data-protection policies of one database, mounted at
 * /api/v1/desk/databases/:id/policies. Admins only: a policy decides what others may read.
 */
export function dataProtectionRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());
  const org = (c: { get(k: 'principal'): { orgId: string } }) => c.get('principal').orgId;

  app.get(
    '/',
    doc('Data protection', 'List data-protection policies of a database', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const views = await listPolicies(deps.sql, org(c), c.req.param('id')!);
      return c.json({ data: views.map(presentPolicy) });
    },
  );
  app.post(
    '/',
    doc('Data protection', 'Create a data-protection policy', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreatePolicy,
      status: 201,
    }),
    async (c) => {
      const body = await jsonBody(c, CreatePolicy);
      return c.json(
        presentPolicy(await createPolicy(deps.sql, restCaller(c), c.req.param('id')!, body)),
        201,
      );
    },
  );
  // The page's preview with data: sample rows of a table as a person sees them (workspace/preview-as.ts).
  app.post(
    '/preview',
    doc('Data protection', 'Preview sample rows of a table as a person sees them', {
      auth: ['apiKey', 'bearer', 'session'],
      body: PreviewAs,
    }),
    async (c) => {
      const body = await jsonBody(c, PreviewAs);
      const p = c.get('principal');
      const out = await previewRowsAs(
        deps,
        { orgId: p.orgId, actor: c.get('actor'), origin: 'user' },
        { databaseId: c.req.param('id')!, userId: body.user_id, table: body.table },
      );
      if (out.status === 'refused') return c.json(out);
      const { columns, rows, truncated } = out.result;
      return c.json({ status: out.status, policy: out.policy, columns, marks: out.marks, rows, truncated });
    },
  );
  app.get(
    '/:pid',
    doc('Data protection', 'Get a data-protection policy', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      return c.json(presentPolicy(await getPolicy(deps.sql, org(c), c.req.param('id')!, c.req.param('pid'))));
    },
  );
  app.patch(
    '/:pid',
    doc('Data protection', 'Update a data-protection policy', {
      auth: ['apiKey', 'bearer', 'session'],
      body: PatchPolicy,
    }),
    async (c) => {
      const body = await jsonBody(c, PatchPolicy);
      return c.json(
        presentPolicy(
          await patchPolicy(deps.sql, restCaller(c), c.req.param('id')!, c.req.param('pid'), body),
        ),
      );
    },
  );
  app.delete(
    '/:pid',
    doc('Data protection', 'Delete a data-protection policy', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      return c.json(
        presentPolicy(await deletePolicy(deps.sql, restCaller(c), c.req.param('id')!, c.req.param('pid'))),
      );
    },
  );
  app.put(
    '/:pid/assignments',
    doc('Data protection', 'Assign a policy to users and roles', {
      auth: ['apiKey', 'bearer', 'session'],
      body: PutAssignments,
    }),
    async (c) => {
      const body = await jsonBody(c, PutAssignments);
      return c.json(
        presentPolicy(
          await setAssignments(deps.sql, restCaller(c), c.req.param('id')!, c.req.param('pid'), body),
        ),
      );
    },
  );
  return app;
}

/** The policy object. The hash salt never leaves the service. */
export function presentPolicy({ policy, rules, assignments }: PolicyView) {
  return {
    id: policy.id,
    database_id: policy.database_id,
    name: policy.name,
    description: policy.description,
    rules: rules.map((r) => ({
      schema: r.schema_name,
      table: r.table_name,
      column: r.column_name,
      action: r.action,
      ...(r.action === 'partial' ? { keep_first: r.keep_first, keep_last: r.keep_last } : {}),
    })),
    assignments: {
      users: assignments.flatMap((a) => (a.user_id ? [a.user_id] : [])),
      roles: assignments.flatMap((a) => (a.role ? [a.role] : [])),
    },
    inserted_at: policy.created_at.toISOString(),
    updated_at: policy.updated_at.toISOString(),
  };
}
