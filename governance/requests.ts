// The life cycle of query requests (governance/README.md "Request life cycle"): reviewers approve,
// reject and comment; the author edits, cancels and runs. Running goes through the same
// executeGoverned as a direct query, after every rule is checked again (request-run.ts).
import type { ParamValue } from '../adapters/types.ts';
import type { Caller } from '../audit/actors.ts';
import { changeOf, isEmptyChange } from '../audit/event-types.ts';
import { recordEvent } from '../audit/events.ts';
import { conflict, forbidden, notFound } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { classifyStatement } from '../sql/classify.ts';
import { type DatabaseRow, findDatabase, listCredentials } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import {
  findRequest,
  insertReview,
  insertRevision,
  listRequests,
  listReviews,
  listReviewsOf,
  listRevisions,
  type QueryRequestRow,
  type RequestStatus,
  type ReviewRow,
  type RevisionRow,
  updateRequest,
} from '../store/query-requests.ts';
import { findUserById } from '../store/users.ts';
import { canSee } from './access.ts';
import { aiClientRefusal } from './ai-clients.ts';
import { aRequest } from './errors.ts';
import { decodeParams, encodeParams } from './params.ts';
import { assessRisk } from './preview/assess.ts';
import { previewRequest, type WritePreview } from './preview/index.ts';
import { errorRefusal, hiddenError } from './protection/error-view.ts';
import { RequestEdit, ReviewComment } from './request-input.ts';
import { aiClientOf, executeRequest } from './request-run.ts';
import { validApprovers } from './review-rules.ts';
import { currentRequirement, type Requirement, requirementFor, roleMayApprove } from './risk-rules.ts';
import { protectionRefusal } from './submit-check.ts';
import type { BypassRequest, GovernanceDeps, GovernedOutcome, QueryActor } from './types.ts';
import { requestUndo, type UndoOffer, undoOffer } from './undo/index.ts';

/** A request with its reviews and the approvals that count right now. */
export interface RequestView {
  request: QueryRequestRow;
  reviews: ReviewRow[];
  validApprovals: string[];
  /** Its risk level, why, and what that level requires now (risk-rules.ts). */
  requirement?: Requirement;
  /** Earlier revisions of its SQL; only on a single read. */
  revisions?: RevisionRow[];
  /** A pending write's preview as the reader may see it (preview/index.ts); only on a single read. */
  preview?: WritePreview | null;
  /** Whether an executed write can be undone now (undo/index.ts); only on a single read. */
  undo?: UndoOffer;
}

/**
 * A request the caller can see, or 404. Visibility is the caller's, with the caller's origin:
 * an AI client reaches only requests on databases and credentials the AI may use at all
 * (DESIGN.md pipeline step 2), whoever made the request and however.
 */
async function visibleRequest(sql: Tx, caller: Caller, id: string, forUpdate = false) {
  const { orgId } = caller;
  const request = await findRequest(sql, orgId, id, { forUpdate });
  const db = request ? await findDatabase(sql, orgId, request.database_id) : null;
  if (!request || !db || !(await canSee(sql, db, caller.actor))) throw notFound('no such query request');
  if (caller.origin === 'ai' && !(await aiMayUse(sql, db, request.credential_id)))
    throw notFound('no such query request');
  const client = caller.actor.kind === 'user' ? caller.actor.oauthClient : undefined;
  if (caller.origin === 'ai' && client && (await aiClientRefusal(sql, orgId, client, db)))
    throw notFound('no such query request');
  return { request, db };
}

async function aiMayUse(sql: Tx, db: DatabaseRow, credentialId: string): Promise<boolean> {
  if (!db.ai_enabled) return false;
  const [cred] = await listCredentials(sql, [db.id]).then((all) => all.filter((c) => c.id === credentialId));
  return cred?.ai_allowed === true;
}

/** A request with its error as `reader` may read it (protection/error-view.ts). */
async function readableBy(sql: Tx, request: QueryRequestRow, reader: QueryActor): Promise<QueryRequestRow> {
  if (request.error === null) return request;
  const why = await errorRefusal(sql, request.database_id, reader, { userId: request.author_user_id });
  return why === null ? request : { ...request, error: hiddenError(why) };
}

async function view(sql: Tx, stored: QueryRequestRow, reader: QueryActor): Promise<RequestView> {
  const request = await readableBy(sql, stored, reader);
  const db = await findDatabase(sql, request.org_id, request.database_id);
  const cred = db ? (await listCredentials(sql, [db.id])).find((c) => c.id === request.credential_id) : null;
  const requirement = cred ? currentRequirement(cred, request) : currentRequirement(NO_RULES, request);
  return {
    request,
    reviews: await listReviews(sql, request.id),
    validApprovals: db ? await validApprovers(sql, request, db, requirement.approver_role) : [],
    requirement,
  };
}

const NO_RULES = { reviews_required: 0, risk_reviews: {} };

export async function getRequest(deps: GovernanceDeps, caller: Caller, id: string): Promise<RequestView> {
  const { request } = await visibleRequest(deps.sql, caller, id);
  // The preview is read (and its reading audited) only here, on the request's own page or
  // GET: lists and the inbox never run one, so a page load costs no query per open write.
  return {
    ...(await view(deps.sql, request, caller.actor)),
    preview: await pendingPreview(deps, request, caller.actor),
    revisions: await listRevisions(deps.sql, [request.id]),
    undo: await undoOffer(deps, request),
  };
}

/**
 * Opens the undo of an executed write the caller can see (undo/index.ts): a new request with the
 * inverse statement, which waits for the same reviews as any write.
 */
export async function undoRequest(deps: GovernanceDeps, caller: Caller, id: string): Promise<RequestView> {
  const { request } = await visibleRequest(deps.sql, caller, id);
  const opened = await requestUndo(deps, caller.orgId, caller, request);
  return getRequest(deps, caller, opened.id);
}

/** Recent executed writes the reader can see that can still be undone, newest first. */
export async function undoableRequests(
  deps: GovernanceDeps,
  caller: Caller,
): Promise<Array<{ request: QueryRequestRow; undo: UndoOffer }>> {
  const page = await listQueryRequests(deps, caller, { status: 'executed', limit: 50 });
  const out: Array<{ request: QueryRequestRow; undo: UndoOffer }> = [];
  for (const request of page.items.filter((r) => r.classification === 'write' && !r.undo_of)) {
    const undo = await undoOffer(deps, request);
    if (undo.available) out.push({ request, undo });
  }
  return out;
}

/** Reviewers look at open requests: their preview is read; an executed one has nothing to preview. */
export function pendingPreview(
  deps: GovernanceDeps,
  request: QueryRequestRow,
  reader: QueryActor,
): Promise<WritePreview | null> {
  if (!OPEN.includes(request.status)) return Promise.resolve(null);
  return previewRequest(deps, request, reader);
}

/** Requests on databases the actor can see, newest first. */
export async function listQueryRequests(
  deps: GovernanceDeps,
  { orgId, actor }: Caller,
  f: { status?: RequestStatus; databaseId?: string; mine?: boolean; cursor?: string; limit: number },
): Promise<{ items: QueryRequestRow[]; nextCursor: string | null }> {
  const restricted = actor.kind === 'user' && actor.role !== 'super_admin' ? actor.userId : null;
  const items = await listRequests(deps.sql, orgId, {
    status: f.status,
    databaseId: f.databaseId,
    authorUserId: f.mine && actor.kind === 'user' ? actor.userId : undefined,
    visibleTo: restricted,
    after: f.cursor,
    limit: f.limit + 1,
  });
  const more = items.length > f.limit;
  const page = await Promise.all(items.slice(0, f.limit).map((r) => readableBy(deps.sql, r, actor)));
  return { items: page, nextCursor: more ? (page.at(-1)?.id ?? null) : null };
}

function requireAuthor(actor: QueryActor, request: QueryRequestRow, what: string): void {
  if (actor.kind !== 'user' || actor.userId !== request.author_user_id)
    throw forbidden(`only the author may ${what}`);
}

const OPEN: RequestStatus[] = ['pending', 'approved', 'rejected'];

/**
 * The author changes the SQL, the parameters or run-on-approval. A new statement or new
 * parameters make a new revision: every earlier approval is void and the request waits again.
 */
/** What waits for a person on the reviews page and at GET /api/v1/desk/query-requests/inbox. */
export interface ReviewInbox {
  /** Pending requests of others that this person can see, so may review (one's own never). */
  waiting: QueryRequestRow[];
  /** Their own open requests: pending, approved and not yet run, or rejected with the reasons. */
  mine: QueryRequestRow[];
  /** Reviews and revisions of each request above, by request id. */
  reviews: Record<string, ReviewRow[]>;
  revisions: Record<string, RevisionRow[]>;
  /** What each request needs (level, why, approvals, approver role) and the approvals that count. */
  approvals: Record<string, { requirement: Requirement; valid: string[] }>;
}

const INBOX_LIMIT = 200;

/**
 * A person's review inbox: visibility is listQueryRequests' (restricted databases only with a
 * grant), errors as the reader may read them. Whether an approval counts is decided when it is
 * given (reviewRequest: not the author, not a key acting for someone, a person with access).
 */
export async function reviewInbox(deps: GovernanceDeps, caller: Caller): Promise<ReviewInbox> {
  const me = caller.actor.kind === 'user' ? caller.actor.userId : null;
  const [pending, own] = await Promise.all([
    listQueryRequests(deps, caller, { status: 'pending', limit: INBOX_LIMIT }),
    listQueryRequests(deps, caller, { mine: true, limit: INBOX_LIMIT }),
  ]);
  const waiting = pending.items.filter((r) => r.author_user_id !== me);
  // A rejected request stays in front of its author, with the reviewers' reasons.
  const mine = me ? own.items.filter((r) => ['pending', 'approved', 'rejected'].includes(r.status)) : [];
  const ids = [...waiting, ...mine].map((r) => r.id);
  const [reviews, revisions] = await Promise.all([
    listReviewsOf(deps.sql, ids),
    listRevisions(deps.sql, ids),
  ]);
  const byRequest = <T extends { request_id: string }>(rows: T[]) =>
    Object.fromEntries(ids.map((id) => [id, rows.filter((x) => x.request_id === id)]));
  return {
    waiting,
    mine,
    reviews: byRequest(reviews),
    revisions: byRequest(revisions),
    approvals: await approvalsOf(deps.sql, [...waiting, ...mine]),
  };
}

/** For each request: what its level requires now, and whose approvals count (as `view` reads them). */
async function approvalsOf(
  sql: Tx,
  requests: QueryRequestRow[],
): Promise<Record<string, { requirement: Requirement; valid: string[] }>> {
  const dbIds = [...new Set(requests.map((r) => r.database_id))];
  const creds = await listCredentials(sql, dbIds);
  const dbs = new Map<string, DatabaseRow | null>();
  const out: Record<string, { requirement: Requirement; valid: string[] }> = {};
  for (const r of requests) {
    if (!dbs.has(r.database_id)) dbs.set(r.database_id, await findDatabase(sql, r.org_id, r.database_id));
    const db = dbs.get(r.database_id);
    const requirement = currentRequirement(creds.find((c) => c.id === r.credential_id) ?? NO_RULES, r);
    out[r.id] = {
      requirement,
      valid: db ? await validApprovers(sql, r, db, requirement.approver_role) : [],
    };
  }
  return out;
}

export async function editRequest(
  deps: GovernanceDeps,
  caller: Caller,
  id: string,
  raw: unknown,
): Promise<RequestView> {
  const { orgId, actor } = caller;
  const edit = parseInput(RequestEdit, raw);
  const input: { statement?: string; params?: ParamValue[]; runOnApproval?: boolean } = {
    ...(edit.statement !== undefined ? { statement: edit.statement } : {}),
    ...(edit.params !== undefined ? { params: edit.params } : {}),
    ...(edit.run_on_approval !== undefined ? { runOnApproval: edit.run_on_approval } : {}),
  };
  const sqlChanged = input.statement !== undefined || input.params !== undefined;
  // The data-protection check and the risk assessment read the target's catalog, rows and the
  // policy on other connections: they run before the transaction, which then holds its row lock
  // only for the write (an embedded store serves one transaction at a time, so a read beside it
  // would wait forever).
  let need: Requirement | null = null;
  let assessed: number | null = null;
  if (sqlChanged) {
    const { request: r, db } = await visibleRequest(deps.sql, caller, id, false);
    assessed = r.revision;
    requireAuthor(actor, r, 'edit a query request');
    if (!OPEN.includes(r.status)) throw conflict(`${aRequest(r.status)} cannot be edited`);
    // An undo binds the kept rows to its statement: another statement could read them out.
    if (r.undo_of) throw conflict('an undo request cannot be edited; cancel it and open the undo again');
    need = await refuseEdit(deps, r, db, actor, input.statement ?? r.statement, input.params);
  }
  const request = await deps.sql.begin(async (tx) => {
    const { request: r, db } = await visibleRequest(tx, caller, id, true);
    requireAuthor(actor, r, 'edit a query request');
    if (!OPEN.includes(r.status)) throw conflict(`${aRequest(r.status)} cannot be edited`);
    // The requirement was assessed on the revision read before the lock: another edit since
    // would leave this one storing that requirement beside a statement it was not assessed for.
    if (sqlChanged && r.revision !== assessed)
      throw conflict('the request was edited meanwhile; read it again and repeat your edit');
    const statement = input.statement ?? r.statement;
    if (sqlChanged) {
      // Reviewers see what the edit changed against the revision they approved.
      await insertRevision(tx, {
        requestId: r.id,
        revision: r.revision,
        statement: r.statement,
        params: r.params,
      });
    }
    const updated = await updateRequest(tx, r.id, {
      ...(sqlChanged
        ? {
            statement,
            params: input.params !== undefined ? encodeParams(input.params) : r.params,
            classification: await classifyStatement(db.adapter, statement),
            revision: r.revision + 1,
            status: 'pending' as const,
            // The level is assessed again for the new SQL, and with it what the request needs.
            ...(need
              ? {
                  risk_level: need.level,
                  risk_why: need.why,
                  reviews_required: need.reviews_required,
                  approver_role: need.approver_role,
                }
              : {}),
          }
        : {}),
      ...(input.runOnApproval !== undefined ? { run_on_approval: input.runOnApproval } : {}),
    });
    if (sqlChanged)
      await insertRevision(tx, {
        requestId: updated.id,
        revision: updated.revision,
        statement: updated.statement,
        params: updated.params,
      });
    // An edit that voids approvals is what a reviewer must be able to trace afterwards.
    const voided = sqlChanged
      ? (await listReviews(tx, r.id)).filter((x) => x.verdict === 'approve' && x.revision === r.revision)
          .length
      : 0;
    // The revision is part of the change: a resubmitted identical statement still voids approvals.
    const change = changeOf(
      {
        revision: r.revision,
        statement: r.statement,
        params: r.params,
        run_on_approval: r.run_on_approval,
        risk_level: r.risk_level,
        reviews_required: r.reviews_required,
        approver_role: r.approver_role,
      },
      {
        revision: updated.revision,
        statement: updated.statement,
        params: updated.params,
        run_on_approval: updated.run_on_approval,
        risk_level: updated.risk_level,
        reviews_required: updated.reviews_required,
        approver_role: updated.approver_role,
      },
    );
    if (!isEmptyChange(change))
      await recordEvent(tx, {
        orgId,
        actor,
        origin: caller.origin,
        event: 'review.edited',
        subject: { request_id: r.id, revision: updated.revision, approvals_voided: voided, ...change },
        databaseId: r.database_id,
        outcome: 'allowed',
        detail: sqlChanged
          ? `revision ${updated.revision}; ${voided} approval(s) voided`
          : 'run on approval changed',
      });
    return updated;
  });
  return view(deps.sql, request, actor);
}

export async function cancelRequest(deps: GovernanceDeps, caller: Caller, id: string): Promise<RequestView> {
  const request = await deps.sql.begin(async (tx) => {
    const { request: r } = await visibleRequest(tx, caller, id, true);
    requireAuthor(caller.actor, r, 'cancel a query request');
    if (!OPEN.includes(r.status)) throw conflict(`${aRequest(r.status)} cannot be canceled`);
    await recordEvent(tx, {
      orgId: caller.orgId,
      actor: caller.actor,
      origin: caller.origin,
      event: 'review.canceled',
      subject: { request_id: r.id, revision: r.revision },
      databaseId: r.database_id,
      outcome: 'allowed',
      detail: `canceled by its author`,
    });
    return updateRequest(tx, r.id, { status: 'canceled' });
  });
  return view(deps.sql, request, caller.actor);
}

/** What an approval that completed a run-on-approval request led to. */
export type RunReport =
  | { status: 'executed'; rows: number }
  | { status: 'failed' | 'denied'; detail: string };

/**
 * A reviewer approves, rejects or comments. Approving and rejecting need someone other than the
 * author who can see the database; the last required approval of a run-on-approval request runs it.
 */
export async function reviewRequest(
  deps: GovernanceDeps,
  caller: Caller,
  id: string,
  input: { verdict: ReviewRow['verdict']; body: unknown },
): Promise<{ view: RequestView; run: RunReport | null }> {
  const { comment } = parseInput(ReviewComment, { comment: input.body });
  const { orgId, actor } = caller;
  if (actor.kind !== 'user') throw forbidden('reviews are given by people');
  // A key acting for someone else (x-act-as-user) would let one holder review as anybody: the
  // four-eyes rule needs the reviewer themself (their session, token or own key).
  if (actor.actingKeyOwnerId !== undefined)
    throw forbidden('an API key acting for a person (x-act-as-user) cannot review');
  // A service account is made by any admin at will: its verdict would be that admin's second pair
  // of eyes on their own query.
  if (actor.serviceAccount) throw forbidden('a service account cannot review');
  const reviewer = actor;
  const { request, runNow } = await deps.sql.begin(async (tx) => {
    // Reviews are given by people on the web pages or the REST API, never through MCP.
    const { request: r, db } = await visibleRequest(tx, caller, id, true);
    const review = {
      id: reviewId(),
      request_id: r.id,
      user_id: reviewer.userId,
      via_api_key_id: reviewer.viaApiKeyId ?? null,
      revision: r.revision,
      body: comment,
    };
    const audit = (event: 'review.commented' | 'review.approved' | 'review.rejected', status: string) =>
      recordEvent(tx, {
        orgId,
        actor: reviewer,
        origin: caller.origin,
        event,
        subject: { request_id: r.id, review_id: review.id, revision: r.revision, status },
        databaseId: r.database_id,
        outcome: 'allowed',
        detail: `${input.verdict} on revision ${r.revision}`,
      });
    if (input.verdict === 'comment') {
      await insertReview(tx, { ...review, verdict: 'comment' });
      await audit('review.commented', r.status);
      return { request: r, runNow: false };
    }
    // Four-eyes rule: the author's own approval or rejection never counts.
    if (reviewer.userId === r.author_user_id) throw forbidden('you cannot review your own query request');
    if (r.status !== 'pending' && r.status !== 'approved')
      throw conflict(`${aRequest(r.status)} cannot be reviewed`);
    const cred = (await listCredentials(tx, [db.id])).find((c) => c.id === r.credential_id);
    const need = currentRequirement(cred ?? NO_RULES, r);
    // The risk level may ask for approvers of a role (risk-rules.ts): another's approval would
    // look like a review without being one.
    if (input.verdict === 'approve' && !roleMayApprove(reviewer.role, need.approver_role))
      throw forbidden(
        `this request (risk ${need.level ?? 'read'}) needs approvals from ${need.approver_role === 'super_admin' ? 'super admins' : 'admins'}`,
      );
    const earlier = await listReviews(tx, r.id);
    if (
      earlier.some(
        (e) => e.user_id === reviewer.userId && e.revision === r.revision && e.verdict === input.verdict,
      )
    )
      throw conflict(`you already gave this verdict on revision ${r.revision}`);
    await insertReview(tx, { ...review, verdict: input.verdict });
    if (input.verdict === 'reject') {
      await audit('review.rejected', 'rejected');
      return { request: await updateRequest(tx, r.id, { status: 'rejected' }), runNow: false };
    }
    const valid = await validApprovers(tx, r, db, need.approver_role);
    if (valid.length < need.reviews_required || r.status === 'approved') {
      await audit('review.approved', r.status);
      return { request: r, runNow: false };
    }
    await audit('review.approved', 'approved');
    const approved = await updateRequest(tx, r.id, { status: 'approved' });
    return { request: approved, runNow: approved.run_on_approval };
  });
  let run: RunReport | null = null;
  if (runNow) {
    // Run-on-approval runs as the author, with every rule checked again as for a manual run.
    const author = await findUserById(deps.sql, request.author_user_id);
    const active = author !== null && author.disabled_at === null;
    const runner: QueryActor = {
      kind: 'user',
      userId: request.author_user_id,
      role: author?.role ?? 'member',
      ...aiClientOf(request),
    };
    // The author is not here: the request runs with the origin it was submitted from.
    run = await executeRequest(deps, request, { actor: runner, origin: request.origin }, null, active).then(
      (o): RunReport => ({ status: 'executed', rows: o.result.num_rows }),
      (err: unknown): RunReport => {
        const e = err as { status?: number; detail?: string; message?: string };
        if (e.status === undefined)
          deps.logger.error({ requestId: request.id, err: { message: e.message } }, 'run on approval failed');
        return {
          status: e.status === 403 || e.status === 404 ? 'denied' : 'failed',
          detail: e.detail ?? 'the query failed',
        };
      },
    );
    // The reviewer reads the author's failure only as far as their own policy lets them.
    if (run.status === 'failed') {
      const why = await errorRefusal(deps.sql, request.database_id, reviewer, {
        userId: request.author_user_id,
      });
      if (why !== null) run = { status: 'failed', detail: hiddenError(why) };
    }
  }
  const latest = await findRequest(deps.sql, orgId, id);
  return { view: await view(deps.sql, latest ?? request, reviewer), run };
}

/**
 * The author runs their approved request (or, as a super admin, bypasses the missing reviews).
 * It runs as the caller with the caller's origin, not the origin stored on the request: an AI
 * client running a request its person made through REST meets the AI rules.
 */
export async function runRequest(
  deps: GovernanceDeps,
  caller: Caller,
  id: string,
  bypass: BypassRequest | null,
  options: { readOnly?: boolean } = {},
): Promise<{ view: RequestView; outcome: GovernedOutcome }> {
  const { orgId, actor } = caller;
  const own = await findRequest(deps.sql, orgId, id);
  const isAuthor = own !== null && actor.kind === 'user' && actor.userId === own.author_user_id;
  // Others learn nothing of a request they cannot see; the author's run attempt is checked (and
  // audited) by the pipeline itself, which answers 404 when their access is gone or, for an AI
  // caller, denies it by the AI rules.
  const request = isAuthor ? own : (await visibleRequest(deps.sql, caller, id)).request;
  requireAuthor(actor, request, 'run a query request');
  const outcome = await executeRequest(deps, request, { ...caller, ...options }, bypass);
  const latest = await findRequest(deps.sql, orgId, id);
  return { view: await view(deps.sql, latest ?? request, actor), outcome };
}

/**
 * An edit data protection would refuse at execution is refused now, as a submission is; else
 * the edited SQL's risk level is assessed, and what it requires returned.
 */
async function refuseEdit(
  deps: GovernanceDeps,
  r: QueryRequestRow,
  db: DatabaseRow,
  actor: QueryActor,
  statement: string,
  params: ParamValue[] | undefined,
): Promise<Requirement> {
  const cred = (await listCredentials(deps.sql, [db.id])).find((c) => c.id === r.credential_id);
  if (!cred) throw notFound('no such query request');
  const run = { orgId: r.org_id, db, cred, actor, statement, params: params ?? decodeParams(r.params) };
  const refusal = await protectionRefusal(deps, run);
  if (refusal) throw refusal;
  const classification = await classifyStatement(db.adapter, statement);
  const risk = await assessRisk(deps, { ...run, author: actor, classification });
  return requirementFor(cred, risk);
}

/** Reviews are rows of their request: `qrv_` + the ULID of a fresh `qr_` id. */
function reviewId(): string {
  return `qrv_${newId('qr').slice(3)}`;
}
