// The runs pages: recent runs across workflows, one run, and acting on it (re-run, retry, cancel, approve).
import { Hono } from 'hono';
import { recordEvent } from '../../../audit/events.ts';
import { approvalRefusal, previewNextStep } from '../../../automation/approval-context.ts';
import { AT_LEAST_ONCE_NOTE, writeDelivery } from '../../../automation/delivery.ts';
import { presentRun } from '../../../automation/present.ts';
import {
  cancelRun,
  decideApproval,
  getRun,
  listReadableRuns,
  retryRun,
  startRun,
  typedInputs,
} from '../../../automation/runs.ts';
import { runUrl } from '../../../automation/snapshot.ts';
import type { Deps } from '../../../core/deps.ts';
import { notFound } from '../../../core/errors.ts';
import { shownTo } from '../../../governance/audit-view.ts';
import { mayRead } from '../../../governance/workflow-access.ts';
import { searchAudit } from '../../../store/audit.ts';
import { findCredentialAndDatabase } from '../../../store/databases.ts';
import { findUserById } from '../../../store/users.ts';
import { findWorkflow, listWorkflows } from '../../../store/workflows.ts';
import { RUN_STATUSES } from '../../../workflows/types.ts';
import { attempt, type PageEnv, pageActor, redirectWith, render } from '../kit/page-context.tsx';
import { RunPage, RunsPage } from './view.tsx';

/** How many runs the runs page lists, newest first across workflows. */
const RUNS_SHOWN = 50;
const RUN_TRIGGERS = ['manual', 'api', 'cron', 'tracker'];

export function runPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();

  app.get('/runs', async (c) => {
    const p = c.get('principal');
    const q = c.req.query();
    const day = (v: string | undefined, plus = 0) =>
      v && /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(Date.parse(`${v}T00:00:00Z`) + plus) : undefined;
    const filter = {
      workflowId: q.workflow || undefined,
      status: (RUN_STATUSES as readonly string[]).includes(q.status ?? '') ? q.status : undefined,
      trigger: RUN_TRIGGERS.includes(q.trigger ?? '') ? q.trigger : undefined,
      from: day(q.from),
      // The "to" day is included whole.
      to: day(q.to, 86_400_000),
      before: /^run_[0-9A-Z]{26}$/.test(q.before ?? '') ? q.before : undefined,
    };
    const workflows = await listWorkflows(deps.sql, p.orgId, { includeArchived: true, limit: 500 });
    const runs = await listReadableRuns(deps, p, workflows, { ...filter, limit: RUNS_SHOWN + 1 });
    const names = Object.fromEntries(workflows.filter((w) => mayRead(p, w)).map((w) => [w.id, w.name]));
    const next = runs.length > RUNS_SHOWN ? runs[RUNS_SHOWN - 1]!.id : null;
    return render(
      c,
      'runs',
      'Workflow runs',
      <RunsPage runs={runs.slice(0, RUNS_SHOWN)} names={names} filter={q} next={next} />,
    );
  });

  app.get('/runs/:workflowId/:runId', async (c) => {
    const p = c.get('principal');
    const { workflowId, runId } = c.req.param();
    const found = await attempt(() => getRun(deps, p, workflowId, runId));
    if (!found.ok) return render(c, 'runs', 'Not found', <p class="error">{found.error.detail}</p>, 404);
    const wf = await findWorkflow(deps.sql, p.orgId, workflowId);
    const name = wf?.name ?? workflowId;
    const { row, state } = found.value;
    // The approval step waited on, if any: who started the run, the next step, and whether this
    // person may decide (automation/approval-context.ts).
    const waiting = state?.steps.find((s) => s.type === 'approval' && s.status === 'waiting') ?? null;
    const initiator = row.initiator_user_id ? await findUserById(deps.sql, row.initiator_user_id) : null;
    const approval =
      waiting && state && wf
        ? {
            step: waiting.name,
            // A key's run is its owner's; the key is named beside them.
            initiator: initiator
              ? `${initiator.email}${row.initiator_api_key_id ? ' (with an API key)' : ''}`
              : row.initiator_api_key_id
                ? 'an API key'
                : row.trigger,
            next: previewNextStep(wf.steps, waiting.name, state, row.inputs),
            refusal:
              approvalRefusal(
                wf.steps,
                waiting.name,
                { user_id: p.userId, role: p.role },
                row.initiator_user_id,
                state,
              )?.message ?? null,
          }
        : null;
    // Query steps whose writes run at least once on their database (automation/delivery.ts).
    const deliveryNotes: Record<string, string> = {};
    for (const step of wf?.steps ?? []) {
      if (step.action.__type__ !== 'query') continue;
      const target = await findCredentialAndDatabase(deps.sql, p.orgId, step.action.credential_id);
      if (target && (await writeDelivery(deps, target.db, target.cred)) === 'at_least_once')
        deliveryNotes[step.id] = AT_LEAST_ONCE_NOTE;
    }
    const temporalUrl = deps.config.temporalUiUrl
      ? runUrl(
          {
            baseUrl: deps.config.baseUrl,
            temporalUiUrl: deps.config.temporalUiUrl,
            temporalNamespace: deps.config.temporalNamespace,
          },
          workflowId,
          runId,
        )
      : null;
    return render(
      c,
      'runs',
      name,
      <RunPage
        run={presentRun(found.value.row, found.value.state)}
        workflowName={name}
        temporalUrl={temporalUrl}
        viewerIsInitiator={found.value.row.initiator_user_id === p.userId}
        approval={approval}
        deliveryNotes={deliveryNotes}
        audit={
          p.role === 'member'
            ? null
            : await shownTo(
                deps.sql,
                pageActor(c),
                await searchAudit(deps.sql, p.orgId, { actor: runId }, { order: 'asc', limit: 100 }),
              )
        }
        csrf={c.get('csrfToken')}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  });

  // Re-run with the same or edited inputs: a new run, the same rules as any start.
  app.post('/runs/:workflowId/:runId/rerun', async (c) => {
    const { workflowId, runId } = c.req.param();
    const p = c.get('principal');
    const inputs: Record<string, string> = {};
    for (const [k, value] of Object.entries(c.get('form')))
      if (k.startsWith('input.')) inputs[k.slice(6)] = value;
    const out = await attempt(async () => {
      const wf = await findWorkflow(deps.sql, p.orgId, workflowId);
      if (!wf) throw notFound('no such workflow');
      const newRun = await startRun(deps, p, workflowId, typedInputs(wf, inputs, true));
      await recordEvent(deps.sql, {
        orgId: p.orgId,
        actor: pageActor(c),
        origin: 'user',
        event: 'run.rerun',
        subject: { workflow_id: workflowId, run_id: newRun, rerun_of: runId },
        outcome: 'allowed',
        detail: `re-ran ${runId} as ${newRun}`,
      });
      return newRun;
    });
    if (!out.ok) return redirectWith(c, `/runs/${workflowId}/${runId}`, 'error', out.error.detail);
    return redirectWith(c, `/runs/${workflowId}/${out.value}`, 'notice', `Re-run of ${runId} started.`);
  });

  app.post('/runs/:workflowId/:runId/retry', async (c) => {
    const { workflowId, runId } = c.req.param();
    const out = await attempt(() => retryRun(deps, c.get('principal'), workflowId, runId));
    if (!out.ok) return redirectWith(c, `/runs/${workflowId}/${runId}`, 'error', out.error.detail);
    return redirectWith(c, `/runs/${workflowId}/${out.value}`, 'notice', `Retry of ${runId} started.`);
  });

  app.post('/runs/:workflowId/:runId/cancel', async (c) => {
    const { workflowId, runId } = c.req.param();
    const page = `/runs/${workflowId}/${runId}`;
    const out = await attempt(() => cancelRun(deps, c.get('principal'), workflowId, runId));
    return out.ok
      ? redirectWith(c, page, 'notice', 'Cancel requested: steps in flight are stopped.')
      : redirectWith(c, page, 'error', out.error.detail);
  });

  app.post('/runs/:workflowId/:runId/approvals', async (c) => {
    const { workflowId, runId } = c.req.param();
    const form = c.get('form');
    const decision = form.decision === 'reject' ? 'reject' : 'approve';
    const page = `/runs/${workflowId}/${runId}`;
    const out = await attempt(() =>
      decideApproval(deps, c.get('principal'), workflowId, runId, {
        decision,
        comment: form.comment || null,
      }),
    );
    if (!out.ok) return redirectWith(c, page, 'error', out.error.detail);
    return redirectWith(
      c,
      page,
      'notice',
      decision === 'approve' ? 'You approved this step.' : 'You rejected this step.',
    );
  });
  return app;
}
