// Workflow definitions: create, read, change, archive (SPEC.md 4.1). Each change is checked whole,
// written in one transaction together with its schedule, or not at all.

import type { Caller } from '../audit/actors.ts';
import { changeOf, isEmptyChange } from '../audit/event-types.ts';
import { recordEvent } from '../audit/events.ts';
import type { Deps } from '../core/deps.ts';
import { AppError, type FieldError, notFound, validationFailed } from '../core/errors.ts';
import { OutboundError } from '../core/outbound/errors.ts';
import { outboundPolicy } from '../core/outbound/policy.ts';
import type { QueryActor } from '../governance/types.ts';
import { findLabel, trackerConfigured } from '../integrations/tracker.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { findUserById } from '../store/users.ts';
import * as store from '../store/workflows.ts';
import type { Action, Permission, StepDefinition } from '../workflows/types.ts';
import { approverProblems } from './approvers.ts';
import { syncSchedule } from './schedules.ts';
import type { CreateWorkflowBody, PatchWorkflowBody, StepBody } from './schema.ts';
import { headerContext } from './snapshot.ts';
import { definitionProblems } from './validate.ts';

type ManageDeps = Pick<Deps, 'sql' | 'keyring' | 'config' | 'temporal' | 'logger'>;

/** A create request; callers inside the service (bench, dev seeds) may leave run_permissions out. */
type WorkflowInput = Omit<CreateWorkflowBody, 'run_permissions'> &
  Partial<Pick<CreateWorkflowBody, 'run_permissions'>>;

export async function createWorkflow(
  deps: ManageDeps,
  caller: Caller,
  body: WorkflowInput,
): Promise<store.WorkflowRow> {
  const { orgId, actor } = caller;
  const id = newId('wf');
  const fields = await prepare(deps, orgId, id, body, null);
  return deps.sql.begin(async (tx) => {
    const row = await store.insertWorkflow(tx, id, orgId, fields);
    await syncSchedule(deps.temporal, row);
    await auditWorkflow(tx, actor, 'workflow.created', null, row);
    return row;
  });
}

export async function patchWorkflow(
  deps: ManageDeps,
  caller: Caller,
  id: string,
  body: PatchWorkflowBody,
): Promise<store.WorkflowRow> {
  const { orgId, actor } = caller;
  return deps.sql.begin(async (tx) => {
    const current = await store.findWorkflow(tx, orgId, id, true);
    if (!current) throw notFound('no such workflow');
    if (current.archived_at) throw new AppError(409, 'conflict', 'Conflict', 'the workflow is archived');
    const merged: CreateWorkflowBody = {
      name: body.name ?? current.name,
      group: body.group !== undefined ? body.group : current.group_name,
      cron_schedule: body.cron_schedule !== undefined ? body.cron_schedule : current.cron_schedule,
      trigger_tracker_label:
        body.trigger_tracker_label !== undefined
          ? body.trigger_tracker_label
          : current.tracker_label_name === null
            ? null
            : { name: current.tracker_label_name },
      inputs: body.inputs ?? current.inputs.map((x) => ({ ...x, default: x.default ?? null })),
      // Steps stored before an action gained a field read with that field's default.
      steps:
        body.steps ??
        (current.steps.map((s) =>
          s.action.__type__ === 'approval'
            ? { ...s, action: { ...s.action, on_timeout: s.action.on_timeout ?? 'fail' } }
            : s,
        ) as CreateWorkflowBody['steps']),
      run_permissions: body.run_permissions ?? current.run_permissions,
    };
    const fields = await prepare(deps, orgId, id, merged, current);
    const row = await store.updateWorkflow(tx, id, fields);
    await syncSchedule(deps.temporal, row);
    await auditWorkflow(tx, actor, 'workflow.updated', current, row);
    return row;
  });
}

/** SPEC.md 3: DELETE archives. The row stays; its schedule goes; it can no longer run. */
export async function archiveWorkflow(
  deps: ManageDeps,
  caller: Caller,
  id: string,
): Promise<store.WorkflowRow> {
  const { orgId, actor } = caller;
  return deps.sql.begin(async (tx) => {
    const current = await store.findWorkflow(tx, orgId, id, true);
    if (!current) throw notFound('no such workflow');
    const row = await store.archiveWorkflow(tx, id);
    await syncSchedule(deps.temporal, row);
    if (current.archived_at === null) await auditWorkflow(tx, actor, 'workflow.archived', current, row);
    return row;
  });
}

/** A definition as an auditor compares it; API header values (sealed secrets) are named, never shown. */
function workflowSnapshot(w: store.WorkflowRow): Record<string, unknown> {
  return {
    name: w.name,
    group: w.group_name,
    cron_schedule: w.cron_schedule,
    tracker_label: w.tracker_label_name,
    inputs: w.inputs,
    steps: w.steps.map((s) =>
      s.action.__type__ === 'api'
        ? { ...s, action: { ...s.action, headers: Object.keys(s.action.headers) } }
        : s,
    ),
    run_permissions: w.run_permissions,
    archived: w.archived_at !== null,
  };
}

async function auditWorkflow(
  tx: Tx,
  actor: QueryActor,
  event: 'workflow.created' | 'workflow.updated' | 'workflow.archived',
  before: store.WorkflowRow | null,
  after: store.WorkflowRow,
): Promise<void> {
  const change = changeOf(before && workflowSnapshot(before), workflowSnapshot(after));
  if (isEmptyChange(change)) return;
  const fields = Object.keys(change.after ?? {});
  await recordEvent(tx, {
    orgId: after.org_id,
    actor,
    origin: 'user',
    event,
    subject: { workflow_id: after.id, ...change },
    outcome: 'allowed',
    detail:
      event === 'workflow.updated'
        ? `${after.name}: ${fields.join(', ')}`
        : `${event === 'workflow.created' ? 'created' : 'archived'} ${after.name}${
            fields.includes('cron_schedule') && after.cron_schedule
              ? ` (schedule ${after.cron_schedule})`
              : ''
          }`,
  });
}

/**
 * Workflow definitions of the caller's organization. Every member may list them (a page or a
 * picker names them); who may start one or read its runs is governance/workflow-access.ts.
 */
export async function listWorkflowDefinitions(
  deps: Pick<Deps, 'sql'>,
  caller: Caller,
  opts: Parameters<typeof store.listWorkflows>[2],
): Promise<store.WorkflowRow[]> {
  return store.listWorkflows(deps.sql, caller.orgId, opts);
}

/** One definition of the caller's organization, archived or not, or null. */
export async function findWorkflowDefinition(
  deps: Pick<Deps, 'sql'>,
  caller: Caller,
  id: string,
): Promise<store.WorkflowRow | null> {
  return store.findWorkflow(deps.sql, caller.orgId, id);
}

export async function getWorkflow(
  deps: Pick<Deps, 'sql'>,
  orgId: string,
  id: string,
): Promise<store.WorkflowRow> {
  const row = await store.findWorkflow(deps.sql, orgId, id);
  if (!row) throw notFound('no such workflow');
  return row;
}

/**
 * Checks a whole definition exactly as saving it would (schema aside), and writes nothing: the
 * editor's as-you-type validation. `workflowId` names the workflow being edited, whose stored
 * header values and tracker label a PATCH would keep.
 */
export async function checkWorkflow(
  deps: ManageDeps,
  orgId: string,
  body: CreateWorkflowBody,
  workflowId: string | null,
): Promise<void> {
  const current = workflowId ? await store.findWorkflow(deps.sql, orgId, workflowId, true) : null;
  if (workflowId && !current) throw notFound('no such workflow');
  await prepare(deps, orgId, workflowId ?? newId('wf'), body, current);
}

/** Checks the whole definition and turns the request into stored fields (ids made, headers sealed). */
async function prepare(
  deps: ManageDeps,
  orgId: string,
  workflowId: string,
  body: WorkflowInput,
  current: store.WorkflowRow | null,
): Promise<store.WorkflowFields> {
  const errors: FieldError[] = definitionProblems({
    cron_schedule: body.cron_schedule,
    inputs: body.inputs,
    steps: body.steps.map((s) => ({
      ...s,
      action: s.action as StepBody['action'] & Record<string, unknown>,
    })),
  });
  const steps = body.steps.map((s, i) => toStep(deps, workflowId, s, i, current, errors));
  for (const [i, s] of body.steps.entries()) {
    if (s.action.__type__ !== 'query') continue;
    if (!(await store.findCredentialTarget(deps.sql, orgId, s.action.credential_id))) {
      errors.push({
        path: `steps.${i}.action.credential_id`,
        message: 'no such credential in this organization',
      });
    }
  }
  await approverProblems(deps.sql, orgId, body.steps, errors);
  await checkEndpoints(deps, body.steps, errors);
  const runPermissions = body.run_permissions ?? [];
  await checkPeople(deps, orgId, runPermissions, errors);
  const label = await resolveLabel(deps, body.trigger_tracker_label, current, errors);
  if (errors.length > 0) throw validationFailed(errors);
  return {
    name: body.name,
    group_name: body.group,
    cron_schedule: body.cron_schedule === null ? null : body.cron_schedule.trim().split(/\s+/).join(' '),
    tracker_label_id: label?.id ?? null,
    tracker_label_name: label?.name ?? null,
    inputs: body.inputs,
    steps,
    run_permissions: runPermissions,
  };
}

/**
 * An api step's endpoint must pass the outbound network policy (core/outbound/policy.ts) when it
 * is saved, not only when it runs. An endpoint whose host is a `${}` template, or a name that
 * does not resolve from here, is checked only when the step runs (the worker may resolve names
 * differently); that run-time check is the one that always applies.
 */
async function checkEndpoints(
  deps: ManageDeps,
  steps: readonly StepBody[],
  errors: FieldError[],
): Promise<void> {
  const policy = outboundPolicy(deps.config);
  for (const [i, s] of steps.entries()) {
    if (s.action.__type__ !== 'api') continue;
    const authority = /^[a-z]+:\/\/([^/?#]*)/i.exec(s.action.endpoint)?.[1] ?? '';
    if (authority.includes('${') || !URL.canParse(s.action.endpoint)) continue;
    const why = await Promise.race([
      policy.target(new URL(s.action.endpoint)).then(
        () => null,
        (err: unknown) => (err instanceof OutboundError && err.failure === 'refused' ? err.message : null),
      ),
      new Promise<null>((resolve) =>
        AbortSignal.timeout(3000).addEventListener('abort', () => resolve(null)),
      ),
    ]);
    if (why)
      errors.push({ path: `steps.${i}.action.endpoint`, message: `refused by the network policy: ${why}` });
  }
}

/** run_permissions may name only people of this organization (a typo would lock them out silently). */
async function checkPeople(
  deps: ManageDeps,
  orgId: string,
  permissions: readonly Permission[],
  errors: FieldError[],
): Promise<void> {
  for (const [i, p] of permissions.entries()) {
    if (!('user_id' in p)) continue;
    const user = await findUserById(deps.sql, p.user_id);
    if (!user || user.org_id !== orgId || user.deleted_at)
      errors.push({ path: `run_permissions.${i}.user_id`, message: 'no such person in this organization' });
  }
}

function toStep(
  deps: ManageDeps,
  workflowId: string,
  s: StepBody,
  i: number,
  current: store.WorkflowRow | null,
  errors: FieldError[],
): StepDefinition {
  const id = s.id ?? newId('wfs');
  let action: Action;
  if (s.action.__type__ === 'api') {
    const before = current?.steps.find((p) => p.id === id)?.action;
    const sealedBefore = before?.__type__ === 'api' ? before.headers : {};
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(s.action.headers)) {
      if (value !== null) {
        headers[name] = deps.keyring.encrypt(value, headerContext(workflowId, id, name));
        continue;
      }
      // null keeps the stored value: responses never show header values, so a round trip sends null.
      const kept = Object.entries(sealedBefore).find(([n]) => n.toLowerCase() === name.toLowerCase());
      if (kept) headers[name] = kept[1];
      else
        errors.push({
          path: `steps.${i}.action.headers.${name}`,
          message: 'a value is required (none is stored)',
        });
    }
    action = { ...s.action, headers, body: s.action.body ?? null };
  } else {
    action = s.action;
  }
  return { id, name: s.name, condition: s.condition || null, action, permissions: s.permissions };
}

async function resolveLabel(
  deps: ManageDeps,
  wanted: { name: string } | null,
  current: store.WorkflowRow | null,
  errors: FieldError[],
): Promise<{ id: string; name: string } | null> {
  if (wanted === null) return null;
  if (current?.tracker_label_id && current.tracker_label_name === wanted.name) {
    return { id: current.tracker_label_id, name: current.tracker_label_name };
  }
  if (!trackerConfigured(deps.config)) {
    errors.push({
      path: 'trigger_tracker_label',
      message: 'the tracker integration is not configured (TRACKER_API_KEY and TRACKER_WEBHOOK_SECRET)',
    });
    return null;
  }
  let label: { id: string; name: string } | null;
  try {
    label = await findLabel(deps.config, outboundPolicy(deps.config), wanted.name);
  } catch (err) {
    deps.logger.warn({ err: { message: (err as Error).message } }, 'tracker label lookup failed');
    throw new AppError(502, 'bad-gateway', 'Bad gateway', 'the tracker did not answer the label lookup');
  }
  if (!label)
    errors.push({
      path: 'trigger_tracker_label.name',
      message: `the tracker has no label named ${wanted.name}`,
    });
  return label;
}
