// One run from the query console: the governed pipeline (reviews, policy, audit) does the work;
// this adds what a person at a console needs around it — how long it took, a line in their
// history, and which result columns their policy protected, so a masked or hidden cell reads as
// such instead of as data or as a real NULL.
import type { QueryResult } from '../adapters/types.ts';
import { AppError } from '../core/errors.ts';
import { resolveTarget } from '../governance/access.ts';
import { readTargetSchema } from '../governance/ai-access.ts';
import { describeProtection } from '../governance/protection/index.ts';
import { runGovernedQuery } from '../governance/query.ts';
import type { GovernanceDeps } from '../governance/types.ts';
import { newId } from '../store/ids.ts';
import { addHistoryLine, type HistoryListing } from './history.ts';
import type { Person } from './saved-queries.ts';
import type { ColumnMark } from './schema.ts';

export type ConsoleRun =
  | { status: 'executed'; result: QueryResult; marks: Array<ColumnMark | null>; durationMs: number }
  | { status: 'pending_review'; requestId: string; reviewsRequired: number; durationMs: number }
  | { status: 'error'; message: string; durationMs: number };

/**
 * Runs the statement, adds its line to the person's history and answers the run with the history
 * lines the page lists next (`listing`: its search and whether the whole history is shown); the
 * lines are null when the line could not be written, and the page reads them itself.
 */
export async function runInConsole(
  deps: GovernanceDeps,
  who: Person,
  q: { databaseId: string; credentialId: string; statement: string; justification: string | null },
  listing: { search: string | null; all: boolean },
): Promise<{ run: ConsoleRun; history: HistoryListing | null }> {
  const actor = { kind: 'user' as const, userId: who.userId, role: who.role };
  const started = performance.now();
  let run: ConsoleRun;
  try {
    const out = await runGovernedQuery(deps, {
      orgId: who.orgId,
      actor,
      origin: 'user',
      databaseId: q.databaseId,
      credentialId: q.credentialId,
      statement: q.statement,
      params: [],
      onReviewRequired: 'submit',
      justification: q.justification,
    });
    const durationMs = Math.round(performance.now() - started);
    run =
      out.status === 'executed'
        ? {
            status: 'executed',
            result: out.result,
            marks: await columnMarks(deps, who, q, out.result.columns),
            durationMs,
          }
        : {
            status: 'pending_review',
            requestId: out.requestId,
            reviewsRequired: out.reviewsRequired,
            durationMs,
          };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    run = { status: 'error', message: err.detail, durationMs: Math.round(performance.now() - started) };
  }
  // A database the person cannot see is not named in their history either.
  const known = run.status !== 'error' || !/no such (database|credential)/.test(run.message);
  const line = {
    id: newId('qh'),
    database_id: known && q.databaseId ? q.databaseId : null,
    credential_id: known && q.credentialId ? q.credentialId : null,
    statement: q.statement,
    outcome: run.status,
    rows_count: run.status === 'executed' ? rowsOf(run.result) : null,
    duration_ms: run.durationMs,
  };
  const history = await addHistoryLine(deps.sql, who, line, listing.search, listing.all).catch(
    (err: unknown) => {
      // The history is a convenience: a failed write (a database deleted meanwhile) loses one line.
      deps.logger.warn({ err }, 'query history line not written');
      return null;
    },
  );
  return { run, history };
}

/** Rows returned by a read, rows changed by a write. */
export function rowsOf(r: QueryResult): number {
  return r.columns.length > 0 ? r.rows.length : r.num_rows;
}

/**
 * What the person's policy does to each result column, by name: a column is marked only when
 * every table column of that name the policy protects is treated alike and no table shows a
 * column of that name, so a mark never claims protection for data that is shown as it is. The
 * console and an approved request's result use it.
 */
export async function columnMarks(
  deps: GovernanceDeps,
  who: Person,
  q: { databaseId: string; credentialId: string },
  columns: string[],
): Promise<Array<ColumnMark | null>> {
  if (columns.length === 0) return [];
  const actor = { kind: 'user' as const, userId: who.userId, role: who.role };
  const { db, cred, policyId } = await resolveTarget(deps.sql, {
    orgId: who.orgId,
    actor,
    databaseId: q.databaseId,
    credentialId: q.credentialId,
  });
  if (policyId === null) return columns.map(() => null);
  const [described, tables] = await Promise.all([
    describeProtection(deps, { orgId: who.orgId, db, cred, actor, policyId }),
    readTargetSchema(deps, db, cred),
  ]);
  const protectedCols = new Set(described.columns.map((c) => `${c.schema}.${c.table}.${c.column}`));
  const shown = new Set(
    tables.flatMap((t) =>
      t.columns.filter((c) => !protectedCols.has(`${t.schema}.${t.name}.${c.name}`)).map((c) => c.name),
    ),
  );
  const byName = new Map<string, Set<string>>();
  for (const c of described.columns) {
    const set = byName.get(c.column) ?? new Set<string>();
    set.add(c.action);
    byName.set(c.column, set);
  }
  return columns.map((name) => {
    const actions = byName.get(name);
    if (actions?.size !== 1 || shown.has(name)) return null;
    return [...actions][0] as ColumnMark;
  });
}
