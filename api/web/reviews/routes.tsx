// The reviews page: query requests waiting for the person, and their own open ones.
import { Hono } from 'hono';
import { approvalRefusal } from '../../../automation/approval-context.ts';
import { getRun, listReadableRuns } from '../../../automation/runs.ts';
import type { Deps } from '../../../core/deps.ts';
import type { GovernanceDeps } from '../../../governance/query.ts';
import {
  cancelRequest,
  editRequest,
  listQueryRequests,
  reviewRequest,
  runRequest,
} from '../../../governance/requests.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { listReviewsOf, listRevisions } from '../../../store/query-requests.ts';
import { listUsers } from '../../../store/users.ts';
import { listWorkflows } from '../../../store/workflows.ts';
import { ResultTable } from '../kit/components.tsx';
import { attempt, type PageEnv, pageActor, redirectWith, render } from '../kit/page-context.tsx';
import { ReviewsPage } from './view.tsx';

export function reviewPageRoutes(deps: Deps): Hono<PageEnv> {
  const gov: GovernanceDeps = deps;
  const app = new Hono<PageEnv>();

  app.get('/reviews', async (c) => {
    const p = c.get('principal');
    const actor = pageActor(c);
    const [pending, mine, users, dbs] = await Promise.all([
      listQueryRequests(gov, p.orgId, actor, { status: 'pending', limit: 200 }),
      listQueryRequests(gov, p.orgId, actor, { mine: true, limit: 200 }),
      listUsers(deps.sql, p.orgId),
      listDatabases(deps.sql, p.orgId, actor, { limit: 500 }),
    ]);
    const waiting = pending.items.filter((r) => r.author_user_id !== p.userId);
    // Workflow runs waiting on an approval this person may give (one inbox).
    const workflows = await listWorkflows(deps.sql, p.orgId, { includeArchived: false, limit: 500 });
    const waitingRuns = await listReadableRuns(deps, p, workflows, {
      status: 'waiting_for_approval',
      limit: 100,
    });
    // The waiting step lives in the run's state, which Temporal holds while the run is live.
    const workflowApprovals = (
      await Promise.all(
        waitingRuns.slice(0, 20).map(async (run) => {
          const wf = workflows.find((w) => w.id === run.workflow_id);
          const view = wf ? await getRun(deps, p, wf.id, run.id).catch(() => null) : null;
          const step = view?.state?.steps.find((st) => st.type === 'approval' && st.status === 'waiting');
          if (!wf || !view?.state || !step) return null;
          const refusal = approvalRefusal(
            wf.steps,
            step.name,
            { user_id: p.userId, role: p.role },
            run.initiator_user_id,
            view.state,
          );
          return refusal
            ? null
            : {
                runId: run.id,
                workflowId: wf.id,
                workflowName: wf.name,
                step: step.name,
                startedAt: run.started_at,
              };
        }),
      )
    ).filter((x) => x !== null);
    // A rejected request stays in front of its author, with the reviewers' reasons.
    const own = mine.items.filter((r) => ['pending', 'approved', 'rejected'].includes(r.status));
    const ids = [...waiting, ...own].map((r) => r.id);
    const [reviews, revisions] = await Promise.all([
      listReviewsOf(deps.sql, ids),
      listRevisions(deps.sql, ids),
    ]);
    const byRequest = <T extends { request_id: string }>(rows: T[]) =>
      Object.fromEntries(ids.map((id) => [id, rows.filter((x) => x.request_id === id)]));
    const ctx = {
      reviews: byRequest(reviews),
      revisions: byRequest(revisions),
      csrf: c.get('csrfToken'),
      role: p.role,
      emails: Object.fromEntries(users.map((u) => [u.id, u.email])),
      databases: Object.fromEntries(
        dbs.items.map(({ db }) => [
          db.id,
          { name: db.name, review_bypass_allowed: db.review_bypass_allowed },
        ]),
      ),
    };
    return render(
      c,
      'reviews',
      'Reviews',
      <ReviewsPage
        waiting={waiting}
        mine={own}
        workflowApprovals={workflowApprovals}
        ctx={ctx}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  });

  app.post('/reviews/:id/review', async (c) => {
    const p = c.get('principal');
    const form = c.get('form');
    const verdict = form.verdict === 'approve' || form.verdict === 'reject' ? form.verdict : 'comment';
    const out = await attempt(() =>
      reviewRequest(gov, p.orgId, pageActor(c), c.req.param('id'), { verdict, body: form.comment ?? '' }),
    );
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    const id = c.req.param('id');
    const ran = out.value.run ? ` It ran: ${out.value.run.status}.` : '';
    const said = { approve: 'Approved', reject: 'Rejected', comment: 'Commented on' }[verdict];
    return redirectWith(c, '/reviews', 'notice', `${said} ${id}.${ran}`);
  });

  // The author changes the SQL: a new revision, approvals so far void (governance/requests.ts).
  app.post('/reviews/:id/edit', async (c) => {
    const p = c.get('principal');
    const statement = (c.get('form').statement ?? '').trim();
    if (!statement) return redirectWith(c, '/reviews', 'error', 'The SQL must not be empty.');
    const out = await attempt(() =>
      editRequest(gov, p.orgId, pageActor(c), c.req.param('id'), { statement }),
    );
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    return redirectWith(
      c,
      '/reviews',
      'notice',
      `Saved revision ${out.value.request.revision} of ${c.req.param('id')}.`,
    );
  });

  app.post('/reviews/:id/cancel', async (c) => {
    const p = c.get('principal');
    const out = await attempt(() =>
      cancelRequest(gov, p.orgId, { actor: pageActor(c), origin: 'user' }, c.req.param('id')),
    );
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    return redirectWith(c, '/reviews', 'notice', `Canceled ${c.req.param('id')}.`);
  });

  // Runs the author's approved request, or with the acknowledgment a super admin's bypass
  // (SPEC.md 2.2). The result is shown on this response: it is the one time it is returned.
  app.post('/reviews/:id/run', async (c) => {
    const p = c.get('principal');
    const form = c.get('form');
    const bypass =
      form.bypass === '1'
        ? { acknowledged: form.acknowledge_override === 'true', reason: form.reason ?? null }
        : null;
    const out = await attempt(() =>
      runRequest(gov, p.orgId, { actor: pageActor(c), origin: 'user' }, c.req.param('id'), bypass),
    );
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    const r = out.value.outcome.result;
    return render(
      c,
      'reviews',
      'Query result',
      <section>
        <p class="muted">
          <a href="/reviews">Reviews</a> /
        </p>
        <h1>Result of {c.req.param('id')}</h1>
        {bypass ? (
          <p class="warning">Run without the required reviews; recorded as a bypass in the audit log.</p>
        ) : null}
        {r.columns.length > 0 ? (
          <ResultTable columns={r.columns} rows={r.rows} truncated={r.truncated} messages={r.messages} />
        ) : (
          // A write returns no columns: say how many rows it changed, not "No rows".
          <p class="notice" role="status" id="rows-affected">
            {r.command || 'Done'}: {r.num_rows} row{r.num_rows === 1 ? '' : 's'} affected
          </p>
        )}
      </section>,
    );
  });

  return app;
}
