import { Hono } from 'hono';
import * as v from 'valibot';
import { DecisionInput } from '../../automation/approval-input.ts';
import { presentRun, presentRunSummary } from '../../automation/present.ts';
import {
  cancelRun,
  decideApproval,
  getRun,
  listRuns,
  rerunRun,
  retryRun,
  startRun,
} from '../../automation/runs.ts';
import type { Deps } from '../../core/deps.ts';
import { badRequest, validationFailed } from '../../core/errors.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';

const ListRuns = v.object({
  before: v.optional(v.string()),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1), v.maxValue(200)),
    '50',
  ),
});

// The domain's schema (automation/approval-input.ts): the approval forms answer the same errors.
const Decision = DecisionInput;

/**
 * The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header section 2.1: an
 * sf-string; a bare token is accepted too, as common clients send one). Null when absent.
 */
function idempotencyKey(header: string | undefined): { key: string } | null {
  if (header === undefined) return null;
  const quoted = /^"(.*)"$/.exec(header.trim());
  const key = quoted ? quoted[1]! : header.trim();
  if (!/^[\x21-\x7e]{1,255}$/.test(key) || (quoted && /["\\]/.test(key)))
    throw validationFailed([
      { path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  return { key };
}

/** Runs of a workflow, mounted under /api/v1/workflows (authentication is the parent's). */
export function workflowRunRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // SPEC.md 4.1: inputs as top-level JSON keys; the answer is plain text naming the run.
  app.post(
    '/:id/run',
    doc('Workflows', 'Run a workflow (inputs as top-level keys; plain-text answer)', {
      auth: ['apiKey', 'bearer', 'session'],
      text: true,
    }),
    async (c) => {
      const raw = await c.req.text();
      let body: unknown = {};
      if (raw.trim() !== '') {
        try {
          body = JSON.parse(raw);
        } catch {
          throw badRequest('the request body must be a JSON object of input values');
        }
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw badRequest('the request body must be a JSON object of input values');
      }
      const id = c.req.param('id');
      const key = idempotencyKey(c.req.header('idempotency-key'));
      const runId = await startRun(deps, restCaller(c), id, body as Record<string, unknown>, key);
      c.header('location', `/api/v1/workflows/${id}/runs/${runId}`);
      return c.text(`Workflow run ${runId} started`, 200);
    },
  );
  app.get(
    '/:id/runs',
    doc('Workflows', 'List runs of a workflow', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      const q = parseWith(ListRuns, c.req.query());
      const rows = await listRuns(deps, restCaller(c), c.req.param('id'), {
        before: q.before,
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      return c.json({
        data: page.map(presentRunSummary),
        next_cursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
      });
    },
  );
  app.get(
    '/:id/runs/:runId',
    doc('Workflows', "Get a run: status, steps, outputs (redacted by the reader's policy), approvals", {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const view = await getRun(deps, restCaller(c), c.req.param('id'), c.req.param('runId'));
      return c.json(presentRun(view.row, view.state));
    },
  );
  app.post(
    '/:id/runs/:runId/cancel',
    doc('Workflows', 'Cancel a run', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      await cancelRun(deps, restCaller(c), c.req.param('id'), c.req.param('runId'));
      return c.json({ id: c.req.param('runId'), cancel_requested: true }, 202);
    },
  );
  app.post(
    '/:id/runs/:runId/retry',
    doc('Workflows', 'Retry a failed run from the step that failed (completed steps are not run again)', {
      auth: ['apiKey', 'bearer', 'session'],
      status: 201,
    }),
    async (c) => {
      const runId = await retryRun(deps, restCaller(c), c.req.param('id'), c.req.param('runId'));
      return c.json({ run_id: runId, retry_of: c.req.param('runId') }, 201);
    },
  );
  app.post(
    '/:id/runs/:runId/rerun',
    doc(
      'Workflows',
      "Re-run: a new run with the body's inputs, or the original run's when the body is empty",
      {
        auth: ['apiKey', 'bearer', 'session'],
        status: 201,
      },
    ),
    async (c) => {
      const text = await c.req.text();
      const body: unknown = text.trim() === '' ? null : parseJsonObject(text);
      const runId = c.req.param('runId');
      const newRun = await rerunRun(
        deps,
        restCaller(c),
        c.req.param('id'),
        runId,
        body === null ? null : { values: body as Record<string, unknown>, fromText: false },
      );
      return c.json({ run_id: newRun, rerun_of: runId }, 201);
    },
  );
  app.post(
    '/:id/runs/:runId/approvals',
    doc('Workflows', 'Approve or reject an approval step', {
      auth: ['apiKey', 'bearer', 'session'],
      body: Decision,
    }),
    async (c) => {
      const body = await jsonBody(c, Decision);
      const runId = c.req.param('runId');
      const result = await decideApproval(deps, c.get('principal'), c.req.param('id'), runId, body);
      return c.json({ run_id: runId, decision: body.decision, ...result });
    },
  );
  return app;
}

function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the request body must be a JSON object of input values');
  return body as Record<string, unknown>;
}
