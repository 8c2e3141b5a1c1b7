import { type ReviewFacts, recordAttempt } from '../audit/events.ts';
import { validationFailed } from '../core/errors.ts';
import { inSpan } from '../core/tracing.ts';
import { classifyStatement } from '../sql/classify.ts';
import { newId } from '../store/ids.ts';
import { insertRequest, insertRevision } from '../store/query-requests.ts';
import { resolveTarget } from './access.ts';
import {
  type AttemptBase,
  DEFAULT_TIMEOUT_SECONDS,
  deny,
  executeGoverned,
  originLimits,
  QueryDeniedError,
  settleRequest,
} from './execute.ts';
import { encodeParams } from './params.ts';
import { assessRisk } from './preview/assess.ts';
import { bypassRefusal } from './review-rules.ts';
import { requirementFor, requirementNote, reviewsConfigured } from './risk-rules.ts';
import { protectionRefusal, type SubmitCheck } from './submit-check.ts';

export { canSee, resolveTarget } from './access.ts';
export { type Delivery, type StepAttempt, stepTagPrefix } from './once.ts';
export type {
  AiClientLimits,
  BypassRequest,
  GovernanceDeps,
  GovernancePolicy,
  GovernedOutcome,
  GovernedQuery,
  GoverningPolicy,
  PendingReviewOutcome,
  QueryActor,
  QueryOrigin,
  SubmittedQuery,
} from './types.ts';

import type {
  GovernanceDeps,
  GovernedOutcome,
  GovernedQuery,
  PendingReviewOutcome,
  SubmittedQuery,
} from './types.ts';

export {
  type AttemptBase,
  DEFAULT_TIMEOUT_SECONDS,
  deny,
  type Execution,
  executeGoverned,
  HARD_MAX_ROWS,
  originLimits,
  QueryDeniedError,
  QueryFailedError,
  settleRequest,
} from './execute.ts';

/**
 * Data protection's verdict on a request is given when it is submitted, not after its reviews:
 * a statement the author's policy refuses never becomes a request (governance/submit-check.ts).
 */
async function refuseBeforeReview(
  deps: GovernanceDeps,
  run: SubmitCheck,
  attempt: AttemptBase,
): Promise<void> {
  const refusal = await protectionRefusal(deps, run);
  if (refusal) await deny(deps, attempt, refusal);
}

/**
 * The one governed-query pipeline (DESIGN.md): every origin — REST, dashboard, MCP,
 * workflow — calls this function and nothing else reaches a target database. Every attempt,
 * whatever its outcome, leaves exactly one audit entry.
 */
export function runGovernedQuery(
  deps: GovernanceDeps,
  q: SubmittedQuery,
): Promise<GovernedOutcome | PendingReviewOutcome>;
export function runGovernedQuery(deps: GovernanceDeps, q: GovernedQuery): Promise<GovernedOutcome>;
export async function runGovernedQuery(
  deps: GovernanceDeps,
  q: GovernedQuery | SubmittedQuery,
): Promise<GovernedOutcome | PendingReviewOutcome> {
  // Its steps are child spans: access, protection, execution (with the statement), audit.
  return inSpan('governed query', { 'countersign.origin': q.origin }, () => governedQuery(deps, q));
}

async function governedQuery(
  deps: GovernanceDeps,
  q: GovernedQuery | SubmittedQuery,
): Promise<GovernedOutcome | PendingReviewOutcome> {
  const attempt: AttemptBase = {
    orgId: q.orgId,
    actor: q.actor,
    origin: q.origin,
    databaseId: q.databaseId,
    credentialId: q.credentialId ?? null,
    statement: q.statement,
    params: q.params,
    classification: null,
  };
  const { db, cred, policyId, maxRows, classification } = await inSpan(
    'governed query access',
    {},
    async () => {
      // 1. Resolve database and credential; 404 when the actor may not see them.
      const target = await resolveTarget(deps.sql, q).catch((err: unknown) => deny(deps, attempt, err));
      attempt.credentialId = target.cred.id;
      const classification = await classifyStatement(target.db.adapter, q.statement);
      attempt.classification = classification;
      // 2. Origin rules (AI caps and read-only).
      const maxRows = await originLimits(deps, q, target.db, target.cred, classification).catch(
        (err: unknown) => deny(deps, attempt, err),
      );
      return { ...target, maxRows, classification };
    },
  );
  const timeoutSeconds = q.timeoutSeconds ?? cred.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  const run = {
    orgId: q.orgId,
    actor: q.actor,
    origin: q.origin,
    db,
    cred,
    policyId,
    statement: q.statement,
    params: q.params,
    classification: classification,
    maxRows,
    timeoutSeconds,
    readOnly: q.readOnly === true,
    ...(q.stepAttempt ? { stepAttempt: q.stepAttempt } : {}),
  };
  // 3. Review gate: a query whose credential (or whose write's risk level, risk-rules.ts) needs
  // reviews never runs directly. A credential without any review rule skips the assessment.
  const risk = reviewsConfigured(cred)
    ? await assessRisk(deps, {
        orgId: q.orgId,
        db,
        cred,
        author: q.actor,
        statement: q.statement,
        params: q.params,
        classification,
      }).catch((err: unknown) => deny(deps, attempt, err))
    : null;
  const need = requirementFor(cred, risk);
  if (need.reviews_required === 0) return executeGoverned(deps, { ...run, review: null });
  await refuseBeforeReview(deps, run, attempt);
  if (q.onReviewRequired !== 'submit') {
    return deny(
      deps,
      attempt,
      new QueryDeniedError(
        `credential ${cred.username} requires ${need.reviews_required} review(s)${need.level ? ` for a ${need.level} write` : ''}; submit a query request instead`,
      ),
    );
  }
  if (q.actor.kind !== 'user')
    return deny(
      deps,
      attempt,
      new QueryDeniedError('a query request needs a person as its author (x-act-as-user)'),
    );
  const author = q.actor;
  const justification = q.justification?.trim() || null;
  // A credential may ask every query waiting for its reviews to say why.
  if (cred.justification_required && !justification)
    return deny(
      deps,
      attempt,
      validationFailed([
        { path: 'justification', message: `credential ${cred.username} asks why you need this query` },
      ]),
    );
  const requestFields = {
    id: newId('qr'),
    org_id: q.orgId,
    database_id: db.id,
    credential_id: cred.id,
    author_user_id: author.userId,
    author_api_key_id: author.viaApiKeyId ?? null,
    origin: q.origin,
    ai_client_id: q.origin === 'ai' ? (author.oauthClient?.id ?? null) : null,
    ai_client_name: q.origin === 'ai' ? (author.oauthClient?.name ?? null) : null,
    statement: q.statement,
    params: encodeParams(q.params),
    classification: classification,
    reviews_required: need.reviews_required,
    risk_level: need.level,
    risk_why: need.why,
    approver_role: need.approver_role,
    run_on_approval: q.runOnApproval ?? false,
    justification,
  };
  if (q.bypass) {
    // SPEC.md 2.2 review_bypass_allowed: recorded on the request and flagged in the audit log.
    const refusal = bypassRefusal(q.actor, author.userId, db, q.bypass);
    if (refusal) return deny(deps, attempt, new QueryDeniedError(refusal));
    const reason = q.bypass.reason ?? null;
    const request = await insertRequest(deps.sql, {
      ...requestFields,
      status: 'executing',
      bypassed: true,
      bypass_reason: reason,
      bypassed_at: new Date(),
    });
    const review: ReviewFacts = {
      requestId: request.id,
      reviewsRequired: need.reviews_required,
      approvedBy: [],
      bypassed: true,
      bypassReason: reason,
    };
    return settleRequest(deps, request.id, () => executeGoverned(deps, { ...run, review }));
  }
  const request = await deps.sql.begin(async (tx) => {
    const row = await insertRequest(tx, {
      ...requestFields,
      status: 'pending',
      bypassed: false,
      bypass_reason: null,
      bypassed_at: null,
    });
    await insertRevision(tx, {
      requestId: row.id,
      revision: row.revision,
      statement: row.statement,
      params: row.params,
    });
    await recordAttempt(tx, {
      ...attempt,
      outcome: 'pending',
      // The level, why and what it requires are in the hash-chained entry of the submission.
      detail: `waiting for ${requirementNote(need)}`,
      review: {
        requestId: row.id,
        reviewsRequired: need.reviews_required,
        approvedBy: [],
        bypassed: false,
        bypassReason: null,
      },
    });
    return row;
  });
  deps.notify?.requestOpened(request, db);
  return {
    status: 'pending_review',
    requestId: request.id,
    databaseId: db.id,
    credentialId: cred.id,
    reviewsRequired: need.reviews_required,
  };
}
