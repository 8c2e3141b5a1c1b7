// The reviews page: query requests waiting for the person, and their own open ones.
import { Hono } from 'hono';
import { approvalsWaitingFor } from '../../../automation/approvals.ts';
import type { Deps } from '../../../core/deps.ts';
import type { GovernanceDeps } from '../../../governance/query.ts';
import {
  cancelRequest,
  editRequest,
  getRequest,
  reviewInbox,
  reviewRequest,
  runRequest,
  undoableRequests,
  undoRequest,
} from '../../../governance/requests.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { columnMarks } from '../../../workspace/console.ts';
import { queryOnly } from '../../middleware/access-settled.ts';
import { ResultTable } from '../kit/components.tsx';
import { attempt, type PageEnv, pageCaller, redirectWith, render } from '../kit/page-context.tsx';
import { RequestPage, ReviewsPage } from './view.tsx';

export function reviewPageRoutes(deps: Deps): Hono<PageEnv> {
  const gov: GovernanceDeps = deps;
  const app = new Hono<PageEnv>();
  // A review, an edit, an undo, a cancel or a run changes no access (api/middleware/access-settled.ts).
  app.use('/reviews/:id/*', queryOnly());

  app.get('/reviews', async (c) => {
    const p = c.get('principal');
    // Query requests and workflow runs waiting on this person (one inbox).
    const [inbox, workflowApprovals, users, dbs] = await Promise.all([
      reviewInbox(gov, pageCaller(c)),
      approvalsWaitingFor(deps, pageCaller(c)),
      listPeople(deps.sql, pageCaller(c)),
      listDatabases(deps.sql, pageCaller(c), { limit: 500 }),
    ]);
    // No write preview here: each is read (and audited) on the request's own page.
    const undoable = await undoableRequests(gov, pageCaller(c));
    const ctx = {
      reviews: inbox.reviews,
      revisions: inbox.revisions,
      approvals: inbox.approvals,
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
        waiting={inbox.waiting}
        mine={inbox.mine}
        undoable={undoable}
        workflowApprovals={workflowApprovals}
        ctx={ctx}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  });

  // One request with its write preview, read as this reader may see it (governance/preview/).
  app.get('/reviews/:id', async (c) => {
    const p = c.get('principal');
    const found = await attempt(() => getRequest(gov, pageCaller(c), c.req.param('id')));
    if (!found.ok) return render(c, 'reviews', 'Not found', <p class="error">No such query request.</p>, 404);
    const v = found.value;
    const r = v.request;
    const columns = v.preview?.columns ?? [];
    const [users, dbs, marks] = await Promise.all([
      listPeople(deps.sql, pageCaller(c)),
      listDatabases(deps.sql, pageCaller(c), { limit: 500 }),
      // The preview is read under this reader's policy: its protected cells are labelled.
      columnMarks(
        gov,
        { orgId: p.orgId, userId: p.userId, role: p.role },
        { databaseId: r.database_id, credentialId: r.credential_id },
        columns,
      ).catch(() => undefined),
    ]);
    const ctx = {
      reviews: { [r.id]: v.reviews },
      revisions: { [r.id]: v.revisions ?? [] },
      approvals: v.requirement ? { [r.id]: { requirement: v.requirement, valid: v.validApprovals } } : {},
      previews: { [r.id]: v.preview ?? null },
      previewMarks: marks ? { [r.id]: marks } : {},
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
      `Request ${r.id}`,
      <RequestPage r={r} ctx={ctx} mine={r.author_user_id === p.userId} />,
    );
  });

  app.post('/reviews/:id/review', async (c) => {
    const form = c.get('form');
    const verdict = form.verdict === 'approve' || form.verdict === 'reject' ? form.verdict : 'comment';
    const out = await attempt(() =>
      reviewRequest(gov, pageCaller(c), c.req.param('id'), { verdict, body: form.comment ?? '' }),
    );
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    const id = c.req.param('id');
    const ran = out.value.run ? ` It ran: ${out.value.run.status}.` : '';
    const said = { approve: 'Approved', reject: 'Rejected', comment: 'Commented on' }[verdict];
    return redirectWith(c, '/reviews', 'notice', `${said} ${id}.${ran}`);
  });

  // The author changes the SQL: a new revision, approvals so far void (governance/requests.ts).
  app.post('/reviews/:id/edit', async (c) => {
    // Checked by editRequest with the schema PATCH /api/v1/desk/query-requests/:id uses.
    const statement = (c.get('form').statement ?? '').trim();
    const out = await attempt(() => editRequest(gov, pageCaller(c), c.req.param('id'), { statement }));
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    return redirectWith(
      c,
      '/reviews',
      'notice',
      `Saved revision ${out.value.request.revision} of ${c.req.param('id')}.`,
    );
  });

  // Opens the undo of an executed write as a new request (governance/undo/).
  app.post('/reviews/:id/undo', async (c) => {
    const out = await attempt(() => undoRequest(gov, pageCaller(c), c.req.param('id')));
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    return redirectWith(
      c,
      '/reviews',
      'notice',
      `Opened ${out.value.request.id}, the undo of ${c.req.param('id')}; it waits for its reviews.`,
    );
  });

  app.post('/reviews/:id/cancel', async (c) => {
    const out = await attempt(() => cancelRequest(gov, pageCaller(c), c.req.param('id')));
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    return redirectWith(c, '/reviews', 'notice', `Canceled ${c.req.param('id')}.`);
  });

  // Runs the author's approved request, or with the acknowledgment a super admin's bypass
  // (SPEC.md 2.2). The result is shown on this response: it is the one time it is returned.
  app.post('/reviews/:id/run', async (c) => {
    const form = c.get('form');
    const bypass =
      form.bypass === '1'
        ? { acknowledged: form.acknowledge_override === 'true', reason: form.reason ?? null }
        : null;
    const out = await attempt(() => runRequest(gov, pageCaller(c), c.req.param('id'), bypass));
    if (!out.ok) return redirectWith(c, '/reviews', 'error', out.error.detail);
    const r = out.value.outcome.result;
    // Cells the runner's policy masks or hides are labelled as the console labels them; without
    // the marks (the schema unreadable) they show as the values they were given.
    const p = c.get('principal');
    const ran = out.value.view.request;
    const marks = await columnMarks(
      gov,
      { orgId: p.orgId, userId: p.userId, role: p.role },
      { databaseId: ran.database_id, credentialId: ran.credential_id },
      r.columns,
    ).catch(() => undefined);
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
          <ResultTable
            columns={r.columns}
            rows={r.rows}
            truncated={r.truncated}
            messages={r.messages}
            {...(marks ? { marks } : {})}
          />
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
