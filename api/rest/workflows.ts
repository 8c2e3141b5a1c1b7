import { Hono } from 'hono';
import * as v from 'valibot';
import { approvalsWaitingFor } from '../../automation/approvals.ts';
import {
  archiveWorkflow,
  createWorkflow,
  getWorkflow,
  listWorkflowDefinitions,
  patchWorkflow,
} from '../../automation/definitions.ts';
import { presentWorkflow } from '../../automation/present.ts';
import { CreateWorkflow, PatchWorkflow } from '../../automation/schema.ts';
import type { Deps } from '../../core/deps.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';
import { workflowRunRoutes } from './workflow-runs.ts';
import { validateDefinition } from './workflow-validate.ts';

const ListWorkflows = v.object({
  group: v.optional(v.string()),
  include_archived: v.optional(v.picklist(['true', 'false']), 'false'),
  after: v.optional(v.string()),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1), v.maxValue(200)),
    '50',
  ),
});

/** SPEC.md 4.1 under /api/v1/workflows: definitions (writes need an admin) and, below, their runs. */
export function workflowRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']));
  const admin = requireAdmin();

  app.get(
    '/',
    doc('Workflows', 'List workflows (by group; archived on request)', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const q = parseWith(ListWorkflows, c.req.query());
      const rows = await listWorkflowDefinitions(deps, restCaller(c), {
        group: q.group,
        includeArchived: q.include_archived === 'true',
        after: q.after,
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      return c.json({
        data: page.map(presentWorkflow),
        next_cursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
      });
    },
  );
  app.post(
    '/',
    doc('Workflows', 'Create a workflow', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateWorkflow,
      status: 201,
    }),
    admin,
    async (c) => {
      const body = await jsonBody(c, CreateWorkflow);
      return c.json(presentWorkflow(await createWorkflow(deps, restCaller(c), body)), 201);
    },
  );
  // The editor's live check (api/rest/workflow-validate.ts): same rules as create/update, no write.
  app.post(
    '/validate',
    doc('Workflows', 'Check a new workflow definition without saving it', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateWorkflow,
    }),
    admin,
    (c) => validateDefinition(deps, c, null),
  );
  app.post(
    '/:id/validate',
    doc('Workflows', 'Check a full definition for this workflow without saving it', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateWorkflow,
    }),
    admin,
    (c) => validateDefinition(deps, c, c.req.param('id')),
  );
  // Before '/:id': workflow ids never read "approvals" (wf_ prefix).
  app.get(
    '/approvals',
    doc('Workflows', 'Runs waiting on an approval step you may decide (your inbox)', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const waiting = await approvalsWaitingFor(deps, restCaller(c));
      return c.json({
        data: waiting.map((w) => ({
          run_id: w.runId,
          workflow_id: w.workflowId,
          workflow_name: w.workflowName,
          step: w.step,
          started_at: w.startedAt.toISOString(),
        })),
      });
    },
  );
  app.get('/:id', doc('Workflows', 'Get a workflow', { auth: ['apiKey', 'bearer', 'session'] }), async (c) =>
    c.json(presentWorkflow(await getWorkflow(deps, c.get('principal').orgId, c.req.param('id')))),
  );
  app.patch(
    '/:id',
    doc('Workflows', 'Update a workflow', { auth: ['apiKey', 'bearer', 'session'], body: PatchWorkflow }),
    admin,
    async (c) => {
      const body = await jsonBody(c, PatchWorkflow);
      return c.json(presentWorkflow(await patchWorkflow(deps, restCaller(c), c.req.param('id'), body)));
    },
  );
  // SPEC.md 3: archives; the archived workflow is returned (archived_at set).
  app.delete(
    '/:id',
    doc('Workflows', 'Archive a workflow', { auth: ['apiKey', 'bearer', 'session'] }),
    admin,
    async (c) => c.json(presentWorkflow(await archiveWorkflow(deps, restCaller(c), c.req.param('id')))),
  );
  app.route('/', workflowRunRoutes(deps));
  return app;
}
