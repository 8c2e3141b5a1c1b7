import type { Context } from 'hono';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { QueryResult } from '../../adapters/types.ts';
import type { Deps } from '../../core/deps.ts';
import { type GovernanceDeps, type QueryActor, runGovernedQuery } from '../../governance/query.ts';
import { Params, RequestEdit, ReviewComment, Statement } from '../../governance/request-input.ts';
import {
  cancelRequest,
  editRequest,
  getRequest,
  listQueryRequests,
  type RequestView,
  reviewInbox,
  reviewRequest,
  runRequest,
  undoRequest,
} from '../../governance/requests.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { queryOnly } from '../middleware/access-settled.ts';
import { authenticate } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';

const Bypass = v.object({
  // SPEC.md 2.2: the override is explicit; anything but `true` is refused (and audited).
  acknowledge_override: v.optional(v.boolean(), false),
  reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))), null),
});
const Submit = v.pipe(
  v.object({
    database_id: v.pipe(v.string(), v.minLength(1)),
    credential_id: v.optional(v.nullable(v.string()), null),
    statement: Statement,
    params: v.optional(Params, []),
    run_on_approval: v.optional(v.boolean(), false),
    bypass_review: v.optional(v.nullable(Bypass), null),
    /** Why the query is needed; required when the credential has justification_required. */
    justification: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))), null),
  }),
  v.description(
    'A query: runs at once through a credential without reviews, else waits as a query request for its approvals.',
  ),
  v.examples([
    {
      database_id: 'db_01JD0000000000000000000000',
      credential_id: null,
      statement: 'select id, email from customers where id = $1',
      params: [42],
      run_on_approval: false,
      bypass_review: null,
      justification: 'SUP-123: the customer asked for their data',
    },
  ]),
);
// Edit and review inputs are governance's, checked there (the Reviews page sends them too).
const Edit = RequestEdit;
const Comment = ReviewComment;
const Run = v.object({ bypass_review: v.optional(v.nullable(Bypass), null) });
const List = v.object({
  status: v.optional(
    v.picklist(['pending', 'approved', 'rejected', 'canceled', 'executing', 'executed', 'failed']),
  ),
  database_id: v.optional(v.string()),
  mine: v.optional(v.picklist(['true', 'false'])),
  cursor: v.optional(v.string()),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1), v.maxValue(200)),
    '50',
  ),
});

/**
 * Query requests, under /api/v1/desk/query-requests (governance/README.md). A person calls with
 * a personal token, session or their own API key; a key marked for it acts for a user with
 * `x-act-as-user` (never to review).
 */
export function queryRequestRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']));
  // Submitting, reviewing, running or undoing a query changes no access (api/middleware/access-settled.ts).
  app.use('*', queryOnly());
  // The process's own governance deps: one notifier for every origin (cli/boot.ts).
  const gov: GovernanceDeps = deps;
  // The acting user (x-act-as-user) is resolved once per request by authenticate().
  const actor = async (c: Context<AppEnv>): Promise<QueryActor> => c.get('actor');

  app.post(
    '/',
    doc('Query requests', 'Submit a query (runs at once, or waits for reviews)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: Submit,
    }),
    async (c) => {
      const body = await jsonBody(c, Submit);
      const orgId = c.get('principal').orgId;
      const outcome = await runGovernedQuery(gov, {
        orgId,
        actor: await actor(c),
        origin: 'user',
        databaseId: body.database_id,
        credentialId: body.credential_id,
        statement: body.statement,
        params: body.params,
        onReviewRequired: 'submit',
        runOnApproval: body.run_on_approval,
        justification: body.justification,
        bypass: body.bypass_review
          ? { acknowledged: body.bypass_review.acknowledge_override, reason: body.bypass_review.reason }
          : null,
      });
      if (outcome.status === 'pending_review') {
        const view = await getRequest(gov, restCaller(c), outcome.requestId);
        return c.json({ status: 'pending_review', request: presentRequest(view), result: null }, 202);
      }
      const view = outcome.requestId ? await getRequest(gov, restCaller(c), outcome.requestId) : null;
      return c.json({
        status: 'executed',
        request: view && presentRequest(view),
        result: presentResult(outcome.result),
      });
    },
  );
  app.get(
    '/',
    doc('Query requests', 'List query requests', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      const q = parseWith(List, c.req.query());
      const page = await listQueryRequests(gov, restCaller(c), {
        ...(q.status ? { status: q.status } : {}),
        ...(q.database_id ? { databaseId: q.database_id } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
        mine: q.mine === 'true',
        limit: q.limit,
      });
      return c.json({
        data: page.items.map((request) =>
          presentRequest({ request, reviews: [], validApprovals: [] }, false),
        ),
        next_cursor: page.nextCursor,
      });
    },
  );
  // Before '/:id': request ids never read "inbox" (qr_ prefix).
  app.get(
    '/inbox',
    doc('Query requests', "Your review inbox: others' pending requests you may review, your own open ones", {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const inbox = await reviewInbox(gov, restCaller(c));
      const present = (request: RequestView['request']) =>
        presentRequest({ request, reviews: inbox.reviews[request.id] ?? [], validApprovals: [] }, false);
      return c.json({ waiting: inbox.waiting.map(present), mine: inbox.mine.map(present) });
    },
  );
  app.get(
    '/:id',
    doc('Query requests', 'Get a query request', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      return c.json(presentRequest(await getRequest(gov, restCaller(c), c.req.param('id'))));
    },
  );
  app.patch(
    '/:id',
    doc('Query requests', 'Edit the SQL of a pending request (voids approvals)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: Edit,
    }),
    async (c) => {
      const body = await jsonBody(c, Edit);
      const view = await editRequest(gov, restCaller(c), c.req.param('id'), body);
      return c.json(presentRequest(view));
    },
  );
  app.post(
    '/:id/cancel',
    doc('Query requests', 'Cancel a request (author)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: Comment,
    }),
    async (c) => {
      return c.json(presentRequest(await cancelRequest(gov, restCaller(c), c.req.param('id'))));
    },
  );
  const review = (verdict: 'approve' | 'reject' | 'comment') => async (c: Context<AppEnv>) => {
    const body = await jsonBody(c, Comment);
    const out = await reviewRequest(gov, restCaller(c), c.req.param('id') ?? '', {
      verdict,
      body: body.comment,
    });
    return c.json({ ...presentRequest(out.view), run: out.run });
  };
  app.post(
    '/:id/approve',
    doc('Query requests', 'Approve a request (reviewer)', { auth: ['apiKey', 'bearer', 'session'] }),
    review('approve'),
  );
  app.post(
    '/:id/reject',
    doc('Query requests', 'Reject a request (reviewer)', { auth: ['apiKey', 'bearer', 'session'] }),
    review('reject'),
  );
  app.post(
    '/:id/comments',
    doc('Query requests', 'Comment on a request', { auth: ['apiKey', 'bearer', 'session'], status: 201 }),
    review('comment'),
  );
  app.post(
    '/:id/undo',
    doc(
      'Query requests',
      'Undo an executed write: opens a new request with its inverse, reviewed like any write',
      {
        auth: ['apiKey', 'bearer', 'session'],
        status: 201,
      },
    ),
    async (c) => {
      const view = await undoRequest(gov, restCaller(c), c.req.param('id'));
      return c.json(presentRequest(view), 201);
    },
  );
  app.post(
    '/:id/run',
    doc('Query requests', 'Run an approved request (or bypass, super admins)', {
      auth: ['apiKey', 'bearer', 'session'],
      body: Run,
    }),
    async (c) => {
      const body = await jsonBody(c, Run);
      const bypass = body.bypass_review
        ? { acknowledged: body.bypass_review.acknowledge_override, reason: body.bypass_review.reason }
        : null;
      const out = await runRequest(gov, restCaller(c), c.req.param('id'), bypass);
      return c.json({
        status: 'executed',
        request: presentRequest(out.view),
        result: presentResult(out.outcome.result),
      });
    },
  );
  return app;
}

function presentResult(r: QueryResult) {
  return {
    columns: r.columns,
    rows: r.rows,
    command: r.command,
    messages: r.messages,
    num_rows: r.num_rows,
    truncated: r.truncated,
  };
}

/** A query request as the API shows it; listings leave out reviews and approval counts. */
export function presentRequest(
  { request: r, reviews, validApprovals, preview, requirement, undo }: RequestView,
  full = true,
) {
  const required = requirement?.reviews_required ?? r.reviews_required;
  const approverRole = requirement?.approver_role ?? r.approver_role;
  return {
    id: r.id,
    database_id: r.database_id,
    credential_id: r.credential_id,
    author: { user_id: r.author_user_id, via_api_key_id: r.author_api_key_id },
    origin: r.origin,
    ai_client: r.ai_client_id ? { id: r.ai_client_id, name: r.ai_client_name } : null,
    statement: r.statement,
    params: r.params,
    classification: r.classification,
    justification: r.justification,
    undo_of: r.undo_of,
    revision: r.revision,
    status: r.status,
    reviews_required: required,
    /** The write's risk level and why (null for a read); what it requires is in reviews_required and approvals. */
    risk: r.risk_level ? { level: r.risk_level, why: r.risk_why } : null,
    run_on_approval: r.run_on_approval,
    bypass: r.bypassed
      ? { bypassed: true, reason: r.bypass_reason, at: r.bypassed_at?.toISOString() ?? null }
      : { bypassed: false, reason: null, at: null },
    result: r.result_command !== null ? { command: r.result_command, num_rows: r.result_rows } : null,
    error: r.error,
    executed_at: r.executed_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    ...(full
      ? {
          approvals: {
            valid: validApprovals,
            count: validApprovals.length,
            required,
            /** Only approvals of people with this role or a higher one count; null: any reviewer. */
            approver_role: approverRole,
            summary: `${validApprovals.length} of ${required} approval${required === 1 ? '' : 's'}`,
          },
          ...(preview !== undefined ? { preview } : {}),
          ...(undo !== undefined ? { undo } : {}),
          reviews: reviews.map((x) => ({
            id: x.id,
            user_id: x.user_id,
            via_api_key_id: x.via_api_key_id,
            revision: x.revision,
            verdict: x.verdict,
            comment: x.body,
            current: x.revision === r.revision,
            created_at: x.created_at.toISOString(),
          })),
        }
      : {}),
  };
}
