// MCP tools that run or follow queries: run_query, sample_table, get_query_request, cancel_query, query_history.
import * as v from 'valibot';
import type { AdapterName, ParamValue } from '../../adapters/types.ts';
import { aiHistory } from '../../governance/ai-access.ts';
import {
  type GovernedOutcome,
  type PendingReviewOutcome,
  QueryDeniedError,
  runGovernedQuery,
} from '../../governance/query.ts';
import { aiCaller, aiTarget, jsonValue, readSchema, TOOL_AUDIT_PREFIX, type ToolDef } from './context.ts';
import { cancelRequestView, describeRequest, getRequestView, runApprovedRequest } from './requests.ts';

const Id = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const Param = v.union([v.string(), v.number(), v.boolean(), v.null()]);

const RunInput = v.object({
  database_id: v.optional(v.pipe(Id, v.description('Database id (db_…); required with sql.'))),
  sql: v.optional(
    v.pipe(v.string(), v.minLength(1), v.maxLength(100_000), v.description('One SQL statement.')),
  ),
  params: v.optional(v.pipe(v.array(Param), v.maxLength(1000), v.description('Bound parameter values.')), []),
  credential_id: v.optional(
    v.pipe(Id, v.description('Credential to run as (crd_…); defaults to an AI-allowed one.')),
  ),
  request_id: v.optional(v.pipe(Id, v.description('Run this approved query request (qr_…) instead of sql.'))),
  justification: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(2000),
      v.description('Why the query is needed, for the reviewers; some credentials require it.'),
    ),
  ),
});

export const runQueryTool: ToolDef<typeof RunInput> = {
  name: 'run_query',
  title: 'Run a governed query',
  description:
    "Runs SQL on a database as you, through Countersign's governance: your access, the database's AI settings, " +
    'read-only for AI, rows capped at the database ai_max_rows, your data-protection policy applied, audited. ' +
    'Values go in `params` (placeholders in the engine style: $1 for Postgres, ? for MySQL). When the credential ' +
    'requires peer review the result is {status: "pending_review", request_id}; once approved, call run_query ' +
    'with only that request_id to run it unchanged.',
  input: RunInput,
  readOnly: false,
  runsQueries: true,
  async run(ctx, input) {
    if (input.request_id) {
      return shapeOutcome(await runApprovedRequest(ctx, input.request_id));
    }
    if (!input.database_id || !input.sql)
      throw new QueryDeniedError('give database_id and sql, or request_id');
    const outcome = await runGovernedQuery(ctx.deps, {
      orgId: ctx.orgId,
      actor: ctx.actor,
      origin: 'ai',
      databaseId: input.database_id,
      // Without one, the pipeline picks the AI default (store/grants.ts findAccessTarget).
      credentialId: input.credential_id,
      statement: input.sql,
      params: input.params as ParamValue[],
      onReviewRequired: 'submit',
      justification: input.justification ?? null,
    });
    return shapeOutcome(outcome);
  },
};

const SampleInput = v.object({
  database_id: v.pipe(Id, v.description('A database id from list_databases (db_…).')),
  table: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(200),
    v.description('Table or view name as get_database_schema lists it.'),
  ),
  schema: v.optional(
    v.pipe(v.string(), v.maxLength(200), v.description('Schema of the table when the name is ambiguous.')),
  ),
  limit: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Rows, 1 to 100.')),
    10,
  ),
  credential_id: v.optional(v.pipe(Id, v.description('Credential to run as (crd_…).'))),
});

export const sampleTableTool: ToolDef<typeof SampleInput> = {
  name: 'sample_table',
  title: 'Sample a table',
  description:
    'The first rows of a table or view (default 10, at most 100), through the same governance as run_query.',
  input: SampleInput,
  readOnly: true,
  runsQueries: true,
  async run(ctx, input) {
    const { db, cred } = await aiTarget(ctx, input.database_id, input.credential_id);
    // The name must be a table the schema lists: only then is it quoted into the statement.
    const tables = (await readSchema(ctx, db, cred)).filter(
      (t) => t.name === input.table && (input.schema === undefined || t.schema === input.schema),
    );
    if (tables.length !== 1) {
      throw new QueryDeniedError(
        tables.length === 0 ? `no table ${input.table}` : `${input.table} is ambiguous; give its schema`,
      );
    }
    const statement = sampleStatement(db.adapter, tables[0]!.schema, tables[0]!.name, input.limit);
    const outcome = await runGovernedQuery(ctx.deps, {
      orgId: ctx.orgId,
      actor: ctx.actor,
      origin: 'ai',
      databaseId: db.id,
      credentialId: cred.id,
      statement,
      params: [],
      onReviewRequired: 'submit',
    });
    return shapeOutcome(outcome);
  },
};

const RequestInput = v.object({ request_id: v.pipe(Id, v.description('A query request id (qr_…).')) });

export const getQueryRequestTool: ToolDef<typeof RequestInput> = {
  name: 'get_query_request',
  title: 'Get a query request',
  description:
    'Status of a query request (pending, approved, rejected, canceled, executing, executed, failed) and its approvals.',
  input: RequestInput,
  readOnly: true,
  async run(ctx, input) {
    return describeRequest(ctx, await getRequestView(ctx, input.request_id));
  },
};

export const cancelQueryTool: ToolDef<typeof RequestInput> = {
  name: 'cancel_query',
  title: 'Cancel a query request',
  description: 'Withdraws one of your query requests that has not run yet.',
  input: RequestInput,
  readOnly: false,
  async run(ctx, input) {
    return describeRequest(ctx, await cancelRequestView(ctx, input.request_id));
  },
};

const HistoryInput = v.object({
  limit: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Entries, 1 to 100.')),
    20,
  ),
});

export const queryHistoryTool: ToolDef<typeof HistoryInput> = {
  name: 'query_history',
  title: 'Query history',
  description:
    'Your recent AI-originated activity from the audit log (any AI client you connected), newest first, ' +
    'on the databases this client may use.',
  input: HistoryInput,
  readOnly: true,
  async run(ctx, input) {
    const rows = await aiHistory(ctx.deps.sql, aiCaller(ctx), input.limit);
    return {
      entries: rows.map((r) => ({
        id: r.id,
        occurred_at: r.occurred_at.toISOString(),
        client: r.ai_client_name,
        ...(r.event === 'mcp.tool'
          ? { tool: (r.subject as { tool?: string } | null)?.tool ?? null }
          : r.statement.startsWith(TOOL_AUDIT_PREFIX)
            ? { tool: r.statement.slice(TOOL_AUDIT_PREFIX.length) }
            : { statement: r.statement, rows_returned: r.rows_returned }),
        database_id: r.database_id,
        outcome: r.outcome,
        request_id: r.request_id,
        detail: r.detail,
      })),
    };
  },
};

function shapeOutcome(outcome: GovernedOutcome | PendingReviewOutcome): Record<string, unknown> {
  if (outcome.status === 'pending_review') {
    return {
      status: 'pending_review',
      request_id: outcome.requestId,
      reviews_required: outcome.reviewsRequired,
      message:
        'The query waits for peer review. Check it with get_query_request; once approved, run_query with request_id.',
    };
  }
  const r = outcome.result;
  return {
    status: 'executed',
    columns: r.columns,
    rows: jsonValue(r.rows),
    num_rows: r.num_rows,
    truncated: r.truncated,
    command: r.command,
    // Notes for the reader, e.g. which columns the policy hides by default (read as NULL).
    messages: r.messages,
    request_id: outcome.requestId ?? null,
  };
}

/** `SELECT * … LIMIT n` in the engine's dialect, identifiers quoted. */
export function sampleStatement(adapter: AdapterName, schema: string, table: string, limit: number): string {
  const q = (name: string) =>
    adapter === 'mysql' || adapter === 'clickhouse'
      ? `\`${name.replace(/`/g, '``')}\``
      : adapter === 'sqlserver'
        ? `[${name.replace(/]/g, ']]')}]`
        : `"${name.replace(/"/g, '""')}"`;
  const from = schema ? `${q(schema)}.${q(table)}` : q(table);
  const n = Math.trunc(limit);
  if (adapter === 'sqlserver') return `SELECT TOP (${n}) * FROM ${from}`;
  if (adapter === 'oracle') return `SELECT * FROM ${from} FETCH FIRST ${n} ROWS ONLY`;
  return `SELECT * FROM ${from} LIMIT ${n}`;
}
