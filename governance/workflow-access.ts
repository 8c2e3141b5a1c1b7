// Who may start a workflow and who may read its runs (workflows/README.md "Who may
// start and read a workflow"). A person who may do neither gets the same 404 as for a workflow
// that does not exist, so the list of restricted workflows does not leak through run endpoints.
import type { Caller, PersonActor } from '../audit/actors.ts';
import type { Deps } from '../core/deps.ts';
import { notFound } from '../core/errors.ts';
import type { Role } from '../store/users.ts';
import { findWorkflow, type WorkflowRow } from '../store/workflows.ts';
import type { Permission } from '../workflows/types.ts';

/** The caller as the permission lists see it: a person's id and role, or an organization key. */
type Who = { kind: 'api_key' } | { kind: 'user'; userId: string; role: Role };

function matches(caller: { userId: string; role: string }, permissions: readonly Permission[]): boolean {
  return permissions.some((p) => ('user_id' in p ? p.user_id === caller.userId : p.role === caller.role));
}

/**
 * May `caller` start `wf`? Organization keys act for the organization and are unrestricted;
 * super admins always may; `run_permissions: []` admits every person (the behaviour before the
 * field existed), otherwise the person must be listed by id or role.
 */
export function mayStart(caller: Who, wf: Pick<WorkflowRow, 'run_permissions'>): boolean {
  if (caller.kind !== 'user') return true;
  if (caller.role === 'super_admin') return true;
  return wf.run_permissions.length === 0 || matches(caller, wf.run_permissions);
}

/**
 * May `caller` read runs of `wf`? Whoever may start it; admins, who can edit the definition
 * anyway; and the approvers an approval step names, who must see what they approve. What each
 * reader sees of the outputs is then cut by their own data-protection policy (governance/protection/run-output.ts).
 */
export function mayRead(caller: Who, wf: Pick<WorkflowRow, 'run_permissions' | 'steps'>): boolean {
  if (mayStart(caller, wf) || caller.kind !== 'user' || caller.role === 'admin') return true;
  return wf.steps.some((s) => s.action.__type__ === 'approval' && matches(caller, s.permissions));
}

/** The workflow if the caller may start it; 404 otherwise (as if it did not exist). */
export async function startableWorkflow(
  deps: Pick<Deps, 'sql'>,
  caller: Caller<PersonActor>,
  workflowId: string,
): Promise<WorkflowRow> {
  const wf = await findWorkflow(deps.sql, caller.orgId, workflowId);
  if (!wf || !mayStart(caller.actor, wf)) throw notFound('no such workflow');
  return wf;
}

/** The workflow if the caller may read its runs; 404 otherwise. */
export async function readableWorkflow(
  deps: Pick<Deps, 'sql'>,
  caller: Caller<PersonActor>,
  workflowId: string,
): Promise<WorkflowRow> {
  const wf = await findWorkflow(deps.sql, caller.orgId, workflowId);
  if (!wf || !mayRead(caller.actor, wf)) throw notFound('no such workflow');
  return wf;
}
