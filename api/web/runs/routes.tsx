// The runs pages: recent runs across workflows, one run, and acting on it (re-run, retry, cancel, approve).
import { Hono } from 'hono';
import type { DecisionBody } from '../../../automation/approval-input.ts';
import { approvalContext } from '../../../automation/approvals.ts';
import { findWorkflowDefinition, listWorkflowDefinitions } from '../../../automation/definitions.ts';
import { deliveryNotes } from '../../../automation/delivery.ts';
import { presentRun } from '../../../automation/present.ts';
import {
  cancelRun,
  decideApproval,
  getRun,
  listReadableRuns,
  rerunRun,
  retryRun,
} from '../../../automation/runs.ts';
import { runUrl } from '../../../automation/snapshot.ts';
import type { Deps } from '../../../core/deps.ts';
import { runAuditTrail } from '../../../governance/audit-access.ts';
import { mayRead } from '../../../governance/workflow-access.ts';
import { RUN_STATUSES } from '../../../workflows/types.ts';
import { attempt, type PageEnv, pageCaller, redirectWith, render } from '../kit/page-context.tsx';
import { RUN_STARTED_NOTICE, RunPage, RunsPage } from './view.tsx';

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
    const workflows = await listWorkflowDefinitions(deps, pageCaller(c), {
      includeArchived: true,
      limit: 500,
    });
    const runs = await listReadableRuns(deps, pageCaller(c), workflows, { ...filter, limit: RUNS_SHOWN + 1 });
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
    const found = await attempt(() => getRun(deps, pageCaller(c), workflowId, runId));
    if (!found.ok) return render(c, 'runs', 'Not found', <p class="error">{found.error.detail}</p>, 404);
    const wf = await findWorkflowDefinition(deps, pageCaller(c), workflowId);
    const name = wf?.name ?? workflowId;
    // "The workflow run started." is news only while it runs: once the run has ended (the page
    // reloads itself until then) the banner would contradict the status beside it.
    const ended = found.value.row.finished_at !== null;
    const notice = c.req.query('notice');
    // The approval step waited on, if any: who started the run, the next step, and whether this
    // person may decide (automation/approvals.ts).
    const approval = await approvalContext(deps, pageCaller(c), wf, found.value);
    // Query steps whose writes run at least once on their database (automation/delivery.ts).
    const notes = await deliveryNotes(deps, p.orgId, wf?.steps ?? []);
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
        deliveryNotes={notes}
        audit={await runAuditTrail(deps.sql, pageCaller(c), runId)}
        csrf={c.get('csrfToken')}
        notice={ended && notice === RUN_STARTED_NOTICE ? undefined : notice}
        error={c.req.query('error')}
      />,
    );
  });

  // Re-run with the same or edited inputs: a new run, the same rules as any start.
  app.post('/runs/:workflowId/:runId/rerun', async (c) => {
    const { workflowId, runId } = c.req.param();
    const inputs: Record<string, string> = {};
    for (const [k, value] of Object.entries(c.get('form')))
      if (k.startsWith('input.')) inputs[k.slice(6)] = value;
    const out = await attempt(() =>
      rerunRun(deps, pageCaller(c), workflowId, runId, { values: inputs, fromText: true }),
    );
    if (!out.ok) return redirectWith(c, `/runs/${workflowId}/${runId}`, 'error', out.error.detail);
    return redirectWith(c, `/runs/${workflowId}/${out.value}`, 'notice', `Re-run of ${runId} started.`);
  });

  app.post('/runs/:workflowId/:runId/retry', async (c) => {
    const { workflowId, runId } = c.req.param();
    const out = await attempt(() => retryRun(deps, pageCaller(c), workflowId, runId));
    if (!out.ok) return redirectWith(c, `/runs/${workflowId}/${runId}`, 'error', out.error.detail);
    return redirectWith(c, `/runs/${workflowId}/${out.value}`, 'notice', `Retry of ${runId} started.`);
  });

  app.post('/runs/:workflowId/:runId/cancel', async (c) => {
    const { workflowId, runId } = c.req.param();
    const page = `/runs/${workflowId}/${runId}`;
    const out = await attempt(() => cancelRun(deps, pageCaller(c), workflowId, runId));
    return out.ok
      ? redirectWith(c, page, 'notice', 'Cancel requested: steps in flight are stopped.')
      : redirectWith(c, page, 'error', out.error.detail);
  });

  app.post('/runs/:workflowId/:runId/approvals', async (c) => {
    const { workflowId, runId } = c.req.param();
    const form = c.get('form');
    // Checked by decideApproval with the schema the API uses (automation/approval-input.ts): an
    // unknown decision is refused, never read as approve.
    const decision = form.decision === 'reject' ? 'reject' : 'approve';
    // Decided from the Reviews inbox: back there (a fixed page, never a URL from the form).
    const fromInbox = form.back === 'reviews';
    const page = fromInbox ? '/reviews' : `/runs/${workflowId}/${runId}`;
    const out = await attempt(() =>
      decideApproval(deps, c.get('principal'), workflowId, runId, {
        decision: form.decision as DecisionBody['decision'],
        comment: form.comment || null,
      }),
    );
    if (!out.ok) return redirectWith(c, page, 'error', out.error.detail);
    return redirectWith(
      c,
      page,
      'notice',
      fromInbox
        ? `You ${decision === 'approve' ? 'approved' : 'rejected'} run ${runId}.${
            decision === 'approve' && out.value.approvals < out.value.required
              ? ` ${out.value.approvals} of ${out.value.required} approvals so far.`
              : ''
          }`
        : decision === 'approve'
          ? 'You approved this step.'
          : 'You rejected this step.',
    );
  });
  return app;
}
