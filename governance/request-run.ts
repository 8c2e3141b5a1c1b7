// Running a query request (governance/README.md "Request life cycle"): whether the author runs it
// or the last approval of a run-on-approval request does, every rule is checked again and the
// request is claimed so it runs once, then executed through the pipeline's execute step.

import type { ReviewFacts } from '../audit/events.ts';
import { conflict } from '../core/errors.ts';
import { classifyStatement } from '../sql/classify.ts';
import { claimRequest, type QueryRequestRow, updateRequest } from '../store/query-requests.ts';
import { resolveTarget } from './access.ts';
import { aRequest } from './errors.ts';
import {
  DEFAULT_TIMEOUT_SECONDS,
  deny,
  executeGoverned,
  originLimits,
  QueryDeniedError,
  settleRequest,
} from './execute.ts';
import { decodeParams } from './params.ts';
import { bypassRefusal, validApprovers } from './review-rules.ts';
import { currentRequirement } from './risk-rules.ts';
import type { BypassRequest, GovernanceDeps, GovernedOutcome, QueryActor, QueryOrigin } from './types.ts';
import { undoExecution } from './undo/index.ts';

/** The OAuth client an AI-origin request was made through, so its run is attributed to it too. */
export function aiClientOf(r: QueryRequestRow): { oauthClient?: { id: string; name: string } } {
  return r.origin === 'ai' && r.ai_client_id
    ? { oauthClient: { id: r.ai_client_id, name: r.ai_client_name ?? '' } }
    : {};
}

/**
 * Checks everything again at run time — the author's access, origin rules, and which approvals
 * still count (reviewer not the author, still with access, on the current revision) — then
 * claims the request so it runs once, and executes it through the pipeline's execute step.
 */
export async function executeRequest(
  deps: GovernanceDeps,
  r: QueryRequestRow,
  caller: { actor: QueryActor; origin: QueryOrigin; readOnly?: boolean },
  bypass: BypassRequest | null,
  runnerActive = true,
): Promise<GovernedOutcome> {
  const runner = caller.actor;
  // A request opened from a dashboard panel stays read-only wherever it is run from: its
  // statement is the panel's, which someone other than its author may have written.
  const readOnly = caller.readOnly === true || r.origin === 'dashboard';
  if (r.status !== 'pending' && r.status !== 'approved') throw conflict(`${aRequest(r.status)} cannot run`);
  const params = decodeParams(r.params);
  const facts: ReviewFacts = {
    requestId: r.id,
    reviewsRequired: r.reviews_required,
    approvedBy: [],
    bypassed: false,
    bypassReason: null,
  };
  const attempt = {
    orgId: r.org_id,
    actor: runner,
    // The caller's origin decides the rules and the audit label, never the stored one.
    origin: caller.origin,
    databaseId: r.database_id,
    credentialId: r.credential_id,
    statement: r.statement,
    params,
    classification: r.classification,
    review: facts,
  };
  // Run-on-approval runs for an author who is not here: they must still be an active user.
  if (!runnerActive)
    return deny(deps, attempt, new QueryDeniedError('the author is no longer an active user'));
  const { db, cred } = await resolveTarget(deps.sql, {
    orgId: r.org_id,
    actor: runner,
    databaseId: r.database_id,
    credentialId: r.credential_id,
  }).catch((err: unknown) => deny(deps, attempt, err));
  const classification = await classifyStatement(db.adapter, r.statement);
  const maxRows = await originLimits(deps, { ...attempt, readOnly }, db, cred, classification).catch(
    (err: unknown) => deny(deps, { ...attempt, classification }, err),
  );
  // A credential whose requirement grew since submission holds the request to the new one.
  const need = currentRequirement(cred, r);
  const approvedBy = await validApprovers(deps.sql, r, db, need.approver_role);
  const required = need.reviews_required;
  const review: ReviewFacts = {
    requestId: r.id,
    reviewsRequired: required,
    approvedBy,
    bypassed: false,
    bypassReason: null,
  };
  const base = { ...attempt, classification, review };
  if (approvedBy.length < required) {
    if (!bypass) {
      if (r.status === 'approved') await claimRequest(deps.sql, r.id, ['approved'], 'pending', r.revision);
      return deny(
        deps,
        base,
        new QueryDeniedError(
          `this request needs ${required} approval(s)${need.approver_role ? ` from ${need.approver_role === 'admin' ? 'admins' : 'super admins'}` : ''}${need.level ? ` (risk ${need.level})` : ''}; ${approvedBy.length} count now`,
        ),
      );
    }
    const refusal = bypassRefusal(runner, r.author_user_id, db, bypass);
    if (refusal) return deny(deps, base, new QueryDeniedError(refusal));
    review.bypassed = true;
    review.bypassReason = bypass.reason ?? null;
  }
  // Undo (governance/undo/): the rows kept before the write, or the kept rows an undo binds.
  const undo = await undoExecution(deps, r, db, cred, runner, params).catch((err: unknown) =>
    deny(deps, base, err),
  );
  const claimed = await claimRequest(deps.sql, r.id, ['pending', 'approved'], 'executing', r.revision);
  if (!claimed) throw conflict('the query request changed or is already running; reload it');
  if (review.bypassed) {
    await updateRequest(deps.sql, r.id, {
      bypassed: true,
      bypass_reason: review.bypassReason,
      bypassed_at: new Date(),
    });
  }
  return settleRequest(deps, r.id, async () => {
    const outcome = await executeGoverned(deps, {
      ...base,
      db,
      cred,
      maxRows,
      timeoutSeconds: cred.timeout ?? DEFAULT_TIMEOUT_SECONDS,
      readOnly,
      ...(undo.backup ? { backup: undo.backup } : {}),
      ...(undo.secretParams ? { secretParams: undo.secretParams } : {}),
    });
    // The write is done: a failure to audit its undo is logged, not reported as the write's.
    await undo
      .done?.(outcome.result.num_rows)
      .catch((err: unknown) =>
        deps.logger.error({ requestId: r.id, err: { message: (err as Error).message } }, 'undo audit failed'),
      );
    return outcome;
  });
}
