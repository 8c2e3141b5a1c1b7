// Steps 4–6 of the pipeline (DESIGN.md): execute and audit. Direct queries (query.ts) and approved
// query requests (requests.ts) both run through executeGoverned, and nothing else runs a statement.
import type { AdapterName, BackupStep, ExecuteOptions, ParamValue, QueryResult } from '../adapters/types.ts';
import { type AuditAttempt, markAudited, type ReviewFacts, recordAttempt } from '../audit/events.ts';
import { AppError } from '../core/errors.ts';
import { inClientSpan, inSpan } from '../core/tracing.ts';
import type { StatementClass } from '../sql/classify.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';
import { updateRequest } from '../store/query-requests.ts';
import { checkAiUse } from './ai-access.ts';
import { poolFor } from './connections.ts';
import { type AttemptOutcome, runStepAttempt, type StepAttempt } from './once.ts';
import { planProtection, ServerStyleError } from './protection/index.ts';
import { withheldError } from './protection/scrub.ts';
import type {
  GovernanceDeps,
  GovernedOutcome,
  GovernedQuery,
  GoverningPolicy,
  QueryActor,
  QueryOrigin,
} from './types.ts';

/** Rows a person's query may return at most; the UI and API say when a result was cut. */
export const HARD_MAX_ROWS = 10_000;
export const DEFAULT_TIMEOUT_SECONDS = 30;

export { QueryDeniedError, QueryFailedError } from './errors.ts';

import { QueryDeniedError, QueryFailedError } from './errors.ts';

/** What the audit needs to know of an attempt before its outcome. */
export type AttemptBase = Omit<AuditAttempt, 'outcome'>;

/** One query ready to run: target resolved, every rule before execution passed. */
export interface Execution {
  orgId: string;
  actor: QueryActor;
  origin: QueryOrigin;
  db: DatabaseRow;
  cred: CredentialRow;
  /** The policy the access statement found for the actor (null: none); undefined: look it up. */
  policyId?: string | null;
  statement: string;
  params: ParamValue[];
  classification: StatementClass;
  maxRows: number;
  timeoutSeconds: number;
  /** Run in the engine's read-only transaction or session (GovernedQuery.readOnly). */
  readOnly?: boolean;
  review: ReviewFacts | null;
  /** A workflow step's attempt (governance/once.ts). */
  stepAttempt?: StepAttempt;
  /** Keep the rows the write touches, in its transaction, for its undo (governance/undo/). */
  backup?: BackupStep;
  /**
   * The values bound at execution when they differ from `params`, which the audit records: an
   * undo binds the kept rows, which no audit entry or request may show.
   */
  secretParams?: ParamValue[];
}

/**
 * Steps 4–6 of the pipeline: execute with bound parameters, the timeout and the row cap, and
 * audit the outcome. Direct queries and approved query requests both end here.
 */
export async function executeGoverned(deps: GovernanceDeps, x: Execution): Promise<GovernedOutcome> {
  const base: AttemptBase = {
    orgId: x.orgId,
    actor: x.actor,
    origin: x.origin,
    databaseId: x.db.id,
    credentialId: x.cred.id,
    statement: x.statement,
    params: x.params,
    classification: x.classification,
    review: x.review,
  };
  const t0 = performance.now();
  let result: QueryResult;
  let ran: AttemptOutcome | null = null;
  let policy: GoverningPolicy | null = null;
  try {
    // Step 5 (DESIGN.md): data protection rewrites the statement so protected columns are masked
    // wherever they appear, and redacts what comes back; it refuses what it cannot analyze. It runs
    // here, at execution, so reviewers approve the statement the author wrote.
    const plan = await inSpan('governed query protection', {}, () =>
      planProtection(deps, {
        orgId: x.orgId,
        db: x.db,
        cred: x.cred,
        actor: x.actor,
        policyId: x.policyId,
        statement: x.statement,
        params: x.secretParams ?? x.params,
        // Secret parameters are the rows an undo puts back (governance/undo undoExecution).
        restoresKeptRows: x.secretParams !== undefined,
      }),
    );
    policy = plan.applied && { policyId: plan.applied.policyId, version: plan.applied.version };
    const pool = poolFor(deps, x.db, x.cred);
    const exec = async (session: Pick<ExecuteOptions, 'tag' | 'prepareAs'>) => {
      let raw: QueryResult;
      try {
        raw = await inClientSpan(DB_SYSTEM[x.db.adapter], statementAttributes(x), () =>
          pool.execute(plan.statement, plan.params, {
            maxRows: x.maxRows,
            timeoutSeconds: x.timeoutSeconds,
            // An AI client's read runs read-only too: the classifier is a list, and a SELECT can
            // still write through a function (lo_create, a user function); only a write the
            // organization let AI make (originLimits) runs read-write.
            readOnly: x.readOnly === true || (x.origin === 'ai' && x.classification !== 'write'),
            ...(x.backup ? { backup: x.backup } : {}),
            ...session,
          }),
        );
      } catch (err) {
        // A server may quote the statement it ran — under a policy the rewritten one,
        // with its masks and hash salt — in its error; the plan cleans that out before anyone sees it.
        // Values bound from sealed rows may be quoted in the server's words: withheld whole.
        throw x.secretParams ? withheldError(err) : plan.failure(err);
      }
      const result = plan.redact(raw);
      return x.secretParams && result.messages.length > 0
        ? {
            ...result,
            messages: [`${result.messages.length} server message(s) withheld: they may quote kept values`],
          }
        : result;
    };
    const executed = await inSpan('governed query execution', {}, async () => {
      if (!x.stepAttempt) return { result: await exec({}), ran: null };
      const attempt = await runStepAttempt(
        deps.sql,
        pool,
        x.stepAttempt,
        x.classification === 'write',
        exec,
        {
          databaseId: x.db.id,
          credentialId: x.cred.id,
        },
      );
      return { result: attempt.result, ran: attempt };
    });
    result = executed.result;
    ran = executed.ran;
  } catch (err) {
    const failure = asQueryFailed(err);
    await recordAttempt(deps.sql, {
      ...base,
      // A governance refusal raised here (data protection) is a denial; anything else a failure,
      // including an unknown name answered the way the database would answer it.
      outcome:
        failure instanceof QueryFailedError || failure instanceof ServerStyleError ? 'failed' : 'denied',
      durationMs: performance.now() - t0,
      detail: failure.message,
    });
    throw markAudited(failure);
  }
  const audit = await recordAttempt(deps.sql, {
    ...base,
    outcome: 'allowed',
    rowsReturned: result.num_rows,
    durationMs: performance.now() - t0,
    ...(ran?.delivery === 'recovered'
      ? { detail: `not run again: the committed write of attempt ${ran.recoveredFrom} is this step's result` }
      : {}),
  });
  return {
    status: 'executed',
    result,
    databaseId: x.db.id,
    credentialId: x.cred.id,
    requestId: x.review?.requestId ?? null,
    auditId: audit.id,
    ...(ran ? { delivery: ran.delivery } : {}),
    policy,
  };
}

/** OpenTelemetry's db.system names (database semantic conventions) of each adapter. */
const DB_SYSTEM: Record<AdapterName, string> = {
  postgres: 'postgresql',
  mysql: 'mysql',
  clickhouse: 'clickhouse',
  sqlserver: 'mssql',
  oracle: 'oracle',
};

/**
 * The statement span's attributes: which database and what kind of statement, never its text nor
 * its parameters — a literal in the text can be the very data a policy masks.
 */
function statementAttributes(x: Execution) {
  return {
    'db.system': DB_SYSTEM[x.db.adapter],
    'countersign.database_id': x.db.id,
    'countersign.statement_class': x.classification,
  };
}

/**
 * Row cap for the origin; AI queries need opt-in on database and credential (SPEC.md 8) and must
 * read. A read-only query (a dashboard panel) must read whatever its origin.
 */
export async function originLimits(
  deps: GovernanceDeps,
  q: Pick<GovernedQuery, 'orgId' | 'actor' | 'origin' | 'maxRows' | 'readOnly'>,
  db: DatabaseRow,
  cred: CredentialRow,
  classification: StatementClass,
): Promise<number> {
  // A panel runs as whoever opens it: a write saved by one person would run with the access of
  // every viewer, so no read-only query may write, whatever its origin.
  if (q.readOnly && classification === 'write')
    throw new QueryDeniedError(
      'a dashboard panel may only read; this statement writes or could not be parsed',
    );
  const maxRows = Math.min(q.maxRows ?? HARD_MAX_ROWS, HARD_MAX_ROWS);
  if (q.origin !== 'ai') return maxRows;
  await checkAiUse(deps.sql, q, db, cred);
  if (
    classification === 'write' &&
    !(await deps.policy?.aiMayWrite?.({ orgId: q.orgId, actor: q.actor, db, cred }))
  ) {
    throw new QueryDeniedError(
      'AI-originated queries may only read; this statement writes or could not be parsed',
    );
  }
  return Math.min(maxRows, db.ai_max_rows);
}

/** Runs a claimed request and records how it ended on the request row. */
export async function settleRequest(
  deps: GovernanceDeps,
  requestId: string,
  execute: () => Promise<GovernedOutcome>,
): Promise<GovernedOutcome> {
  // The attempt is audited by then, whatever happens to the bookkeeping after it (markAudited).
  const settled = (e: unknown) => {
    throw markAudited(e);
  };
  let outcome: GovernedOutcome;
  try {
    outcome = await execute();
  } catch (err) {
    await updateRequest(deps.sql, requestId, {
      status: 'failed',
      error: err instanceof AppError ? err.detail : 'the query failed',
      executed_at: new Date(),
    }).catch(settled);
    throw err;
  }
  await updateRequest(deps.sql, requestId, {
    status: 'executed',
    result_command: outcome.result.command,
    result_rows: outcome.result.num_rows,
    executed_at: new Date(),
  }).catch(settled);
  return outcome;
}

/** Audits a refused attempt, then throws the refusal. */
export async function deny(deps: GovernanceDeps, attempt: AttemptBase, err: unknown): Promise<never> {
  if (!(err instanceof AppError)) {
    // Not a refusal but a fault of ours (e.g. the store): audited as failed, without its message.
    await recordAttempt(deps.sql, {
      ...attempt,
      outcome: 'failed',
      detail: 'internal error before execution',
    });
    throw markAudited(err);
  }
  await recordAttempt(deps.sql, { ...attempt, outcome: 'denied', detail: err.detail });
  throw markAudited(err);
}

function asQueryFailed(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { kind?: string; message?: string };
  const kind = e.kind === 'connection' || e.kind === 'timeout' ? e.kind : 'query';
  // Adapter errors are already stripped of passwords and key material (adapters/errors.ts).
  return new QueryFailedError(kind, e.message ?? 'the query failed');
}
