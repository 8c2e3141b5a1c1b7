import type { Deps } from '../config/runtime.ts';
import { type EvalContext, renderSql } from '../expr/index.ts';
import { runGovernedQuery } from '../governance/query.ts';
import { findCredentialTarget } from '../store/workflows.ts';
import { nonRetryable } from './failures.ts';

/** Rows a workflow query step keeps at most: outputs live in the run's Temporal history. */
export const WORKFLOW_MAX_ROWS = 1000;

export interface QueryStepInput {
  orgId: string;
  runId: string;
  workflowId: string;
  credentialId: string;
  /** The SQL template; every `${}` becomes a bound parameter. */
  query: string;
  timeoutSeconds: number | null;
  ctx: EvalContext;
}

/** SPEC.md 2.1 query step output. */
export interface QueryStepOutput {
  rows: unknown[][];
  columns: string[];
  command: string;
  messages: string[];
  num_rows: number;
  truncated: boolean;
}

/** Runs a query step through the one governed query pipeline (DESIGN.md), as the workflow run. */
export async function runQueryStep(
  deps: Pick<Deps, 'sql' | 'keyring' | 'logger' | 'pools'>,
  input: QueryStepInput,
): Promise<QueryStepOutput> {
  const target = await findCredentialTarget(deps.sql, input.orgId, input.credentialId);
  if (!target) throw nonRetryable('NotFound', 'the credential of this query step no longer exists');
  // The placeholder style is the database's: values never enter the SQL text.
  const { text, params } = renderSql(input.query, input.ctx, target.adapter);
  const outcome = await runGovernedQuery(
    { sql: deps.sql, keyring: deps.keyring, logger: deps.logger, pools: deps.pools },
    {
      orgId: input.orgId,
      actor: { kind: 'workflow_run', runId: input.runId, workflowId: input.workflowId },
      origin: 'workflow',
      databaseId: target.database_id,
      credentialId: input.credentialId,
      statement: text,
      params,
      maxRows: WORKFLOW_MAX_ROWS,
      ...(input.timeoutSeconds !== null ? { timeoutSeconds: input.timeoutSeconds } : {}),
    },
  );
  // 'refuse' is the default: a credential that needs reviews is denied, never left pending.
  if (outcome.status !== 'executed') throw nonRetryable('QueryDenied', 'the credential requires reviews');
  const r = outcome.result;
  return {
    rows: r.rows,
    columns: r.columns,
    command: r.command,
    messages: r.messages,
    num_rows: r.num_rows,
    truncated: r.truncated,
  };
}
