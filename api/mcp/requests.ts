// Query requests seen from MCP: thin shapes over governance/requests.ts (read, cancel, run approved).
import { decodeParams } from '../../governance/params.ts';
import type { GovernedOutcome } from '../../governance/query.ts';
import { cancelRequest, getRequest, type RequestView, runRequest } from '../../governance/requests.ts';
import { aiCaller, type ToolContext } from './context.ts';

export async function getRequestView(ctx: ToolContext, id: string): Promise<RequestView> {
  return getRequest(ctx.deps, aiCaller(ctx), id);
}

export async function cancelRequestView(ctx: ToolContext, id: string): Promise<RequestView> {
  return cancelRequest(ctx.deps, aiCaller(ctx), id);
}

/** Runs the author's approved request exactly as reviewed; governance checks everything again. */
export async function runApprovedRequest(ctx: ToolContext, id: string): Promise<GovernedOutcome> {
  return (await runRequest(ctx.deps, aiCaller(ctx), id, null)).outcome;
}

export function describeRequest(
  ctx: ToolContext,
  { request: r, validApprovals }: RequestView,
): Record<string, unknown> {
  return {
    request_id: r.id,
    status: r.status,
    database_id: r.database_id,
    credential_id: r.credential_id,
    statement: r.statement,
    params: decodeParams(r.params),
    reviews_required: r.reviews_required,
    approvals: validApprovals.length,
    yours: r.author_user_id === ctx.actor.userId,
    created_at: r.created_at.toISOString(),
    executed_at: r.executed_at?.toISOString() ?? null,
    result_rows: r.result_rows,
    error: r.error,
  };
}
