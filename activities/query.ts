import { asyncLocalStorage } from '@temporalio/activity';
import type { Deps } from '../core/deps.ts';
import { type EvalContext, renderSql } from '../expr/index.ts';
import { DEFAULT_TIMEOUT_SECONDS, type QueryActor, runGovernedQuery } from '../governance/query.ts';
import { stepActor, stepTarget } from '../governance/workflow-step.ts';
import { classifyStatement } from '../sql/classify.ts';
import type { OutputProtection } from '../workflows/types.ts';
import { nonRetryable } from './failures.ts';

/** Rows a workflow query step keeps at most: outputs live in the run's Temporal history. */
export const WORKFLOW_MAX_ROWS = 1000;

/** How often a running query step tells Temporal its worker is alive (heartbeatTimeout: a few times this). */
const HEARTBEAT_MS = 1000;

export interface QueryStepInput {
  orgId: string;
  runId: string;
  workflowId: string;
  /** Absent in runs begun before exactly-once steps: those run as they did. */
  stepId?: string;
  credentialId: string;
  /** The SQL template; every `${}` becomes a bound parameter. */
  query: string;
  timeoutSeconds: number | null;
  ctx: EvalContext;
  /** The person who started the run: the step runs as them. Null: as the organization. */
  initiatorUserId?: string | null;
}

/** SPEC.md 2.1 query step output. */
export interface QueryStepOutput {
  rows: unknown[][];
  columns: string[];
  command: string;
  messages: string[];
  num_rows: number;
  truncated: boolean;
  /** The policy the rows were computed under; readers under another one see them redacted. */
  protection: OutputProtection;
}

/**
 * Runs a query step through the one governed query pipeline (DESIGN.md): as the person who
 * started the run — their access and data-protection policy apply, so values that later steps
 * copy into API calls and chat messages are already masked for them — or, for runs nobody
 * started (cron, tracker, organization key), as the organization.
 */
export async function runQueryStep(
  deps: Pick<Deps, 'sql' | 'keyring' | 'logger' | 'pools'>,
  input: QueryStepInput,
): Promise<QueryStepOutput> {
  const info = asyncLocalStorage.getStore()?.info;
  // A regular activity heartbeats while its statement runs, so a worker that dies is noticed
  // within the step's heartbeatTimeout, not its whole timeout (local ones cannot heartbeat).
  const beat =
    info && !info.isLocal ? setInterval(() => asyncLocalStorage.getStore()?.heartbeat(), HEARTBEAT_MS) : null;
  try {
    // A regular activity's attempt is known to Temporal: the write is settled across attempts.
    const stepAttempt =
      info && !info.isLocal && input.stepId
        ? { runId: input.runId, stepId: input.stepId, attempt: info.attempt }
        : undefined;
    return await governedStep(deps, input, stepAttempt);
  } finally {
    if (beat) clearInterval(beat);
  }
}

/** How a query step must be scheduled (workflows/activity-options.ts queryPlacement). */
export interface QueryStepPlan {
  /** The statement timeout it runs under: the step's own, else the credential's, else the default. */
  timeoutSeconds: number;
  /** Only a read may run as a local activity: a local attempt cannot be settled once (README). */
  readOnly: boolean;
}

/** Looks up what the workflow needs to choose the step's timeouts and where it runs. */
export async function planQueryStep(
  deps: Pick<Deps, 'sql'>,
  input: Pick<QueryStepInput, 'orgId' | 'credentialId' | 'query' | 'timeoutSeconds' | 'ctx'>,
): Promise<QueryStepPlan> {
  const target = await stepTarget(deps.sql, input.orgId, input.credentialId);
  if (!target) throw nonRetryable('NotFound', 'the credential of this query step no longer exists');
  const { text } = renderSql(input.query, input.ctx, target.adapter);
  return {
    timeoutSeconds: input.timeoutSeconds ?? target.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    readOnly: (await classifyStatement(target.adapter, text)) === 'read',
  };
}

async function governedStep(
  deps: Pick<Deps, 'sql' | 'keyring' | 'logger' | 'pools'>,
  input: QueryStepInput,
  stepAttempt: { runId: string; stepId: string; attempt: number } | undefined,
): Promise<QueryStepOutput> {
  const target = await stepTarget(deps.sql, input.orgId, input.credentialId);
  if (!target) throw nonRetryable('NotFound', 'the credential of this query step no longer exists');
  // The placeholder style is the database's: values never enter the SQL text.
  const { text, params } = renderSql(input.query, input.ctx, target.adapter);
  const actor = await actorOf(deps, input);
  const outcome = await runGovernedQuery(
    { sql: deps.sql, keyring: deps.keyring, logger: deps.logger, pools: deps.pools },
    {
      orgId: input.orgId,
      actor,
      origin: 'workflow',
      databaseId: target.database_id,
      credentialId: input.credentialId,
      statement: text,
      params,
      maxRows: WORKFLOW_MAX_ROWS,
      ...(input.timeoutSeconds !== null ? { timeoutSeconds: input.timeoutSeconds } : {}),
      ...(stepAttempt ? { stepAttempt } : {}),
    },
  );
  // 'refuse' is the default: a credential that needs reviews is denied, never left pending.
  if (outcome.status !== 'executed') throw nonRetryable('QueryDenied', 'the credential requires reviews');
  const r = outcome.result;
  // The pipeline says which policy (and which version of it) the statement was planned under.
  const policy = outcome.policy;
  return {
    rows: r.rows,
    columns: r.columns,
    command: r.command,
    messages: r.messages,
    num_rows: r.num_rows,
    truncated: r.truncated,
    protection:
      // A recovered output was computed by an earlier attempt, under whichever policy applied
      // then: record a value no policy has, so every reader with a policy sees the rows
      // redacted (fail closed).
      outcome.delivery !== 'recovered'
        ? {
            database_id: target.database_id,
            policy_id: policy?.policyId ?? null,
            policy_version: policy?.version ?? null,
          }
        : { database_id: target.database_id, policy_id: 'unknown', policy_version: null },
  };
}

/** Who the step runs as (governance/workflow-step.ts): none when its initiator is no longer active. */
async function actorOf(deps: Pick<Deps, 'sql'>, input: QueryStepInput): Promise<QueryActor> {
  const actor = await stepActor(deps.sql, input);
  if (!actor)
    throw nonRetryable(
      'NotPermitted',
      'the person who started this run is no longer active, so its queries no longer run',
    );
  return actor;
}
