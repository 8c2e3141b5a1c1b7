import { recordAttempt } from '../audit/events.ts';
import { failAbandonedRequests } from '../store/query-requests.ts';
import { pruneBuckets } from '../store/rate-limits.ts';
import { pruneBackups } from '../store/request-backups.ts';
import { findUserById } from '../store/users.ts';
import { decodeParams } from './params.ts';
import type { GovernanceDeps } from './types.ts';

/** Past its statement timeout, how long an `executing` request may wait to be settled. */
const GRACE_SECONDS = 120;
const INTERRUPTED =
  'interrupted: the process running this query stopped before it finished; whether it took effect on the database is unknown';

/**
 * Settles query requests whose executing process died: they become `failed` with an honest
 * message, and the interrupted attempt gets its audit entry (DESIGN.md step 6: failures are
 * audited too), so no execution is missing from the chain.
 */
export async function recoverAbandonedRequests(
  deps: Pick<GovernanceDeps, 'sql' | 'logger'>,
): Promise<number> {
  const rows = await failAbandonedRequests(deps.sql, GRACE_SECONDS, INTERRUPTED);
  for (const r of rows) {
    const author = await findUserById(deps.sql, r.author_user_id);
    await recordAttempt(deps.sql, {
      orgId: r.org_id,
      actor: {
        kind: 'user',
        userId: r.author_user_id,
        role: author?.role ?? 'member',
        ...(r.author_api_key_id ? { viaApiKeyId: r.author_api_key_id } : {}),
        ...(r.ai_client_id ? { oauthClient: { id: r.ai_client_id, name: r.ai_client_name ?? '' } } : {}),
      },
      origin: r.origin,
      databaseId: r.database_id,
      credentialId: r.credential_id,
      statement: r.statement,
      params: decodeParams(r.params),
      classification: r.classification,
      outcome: 'failed',
      review: {
        requestId: r.id,
        reviewsRequired: r.reviews_required,
        approvedBy: [],
        bypassed: r.bypassed,
        bypassReason: r.bypass_reason,
      },
      detail: INTERRUPTED,
    });
  }
  if (rows.length > 0) {
    deps.logger.warn({ requests: rows.map((r) => r.id) }, 'settled query requests abandoned while executing');
  }
  return rows.length;
}

/** Runs the sweeps now and every minute; returns a stop function. Every replica may run it safely. */
export function startMaintenance(deps: Pick<GovernanceDeps, 'sql' | 'logger'>, everyMs = 60_000): () => void {
  const sweep = () =>
    Promise.all([
      recoverAbandonedRequests(deps),
      // Failure windows end after minutes; a day-old bucket is only clutter (identity/throttle.ts).
      pruneBuckets(deps.sql, 86_400),
      // Rows kept for undo past COUNTERSIGN_UNDO_RETENTION_DAYS (governance/undo/).
      pruneBackups(deps.sql),
    ]).catch((err: unknown) =>
      deps.logger.error(
        { err: err instanceof Error ? err.message : String(err) },
        'maintenance sweep failed',
      ),
    );
  void sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
