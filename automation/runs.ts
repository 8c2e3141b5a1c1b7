// Runs of a workflow: start (manual, API, tracker), read, list, cancel, approve. The Temporal
// workflow id is the run id; the store keeps one row per run, finished by the run itself.
import { createHash } from 'node:crypto';
import { ApplicationFailure, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { actorIsAdmin, type Caller, type PersonActor } from '../audit/actors.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import type { Deps } from '../core/deps.ts';
import { AppError, conflict, forbidden, notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import type { TemporalHandle } from '../core/temporal.ts';
import { InputError, parseInputs } from '../expr/index.ts';
import { redactRun, valuesRefusal } from '../governance/protection/run-output.ts';
import { mayRead, mayStart, readableWorkflow, startableWorkflow } from '../governance/workflow-access.ts';
import { type Principal, principalCaller } from '../identity/principal.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { findIdempotentRun, type IdempotentStart, insertRunWithKey } from '../store/run-idempotency.ts';
import * as runStore from '../store/workflow-runs.ts';
import type { WorkflowRow } from '../store/workflows.ts';
import { approveUpdate, NOT_PERMITTED, NOT_WAITING, stateQuery } from '../workflows/messages.ts';
import type { RunSnapshot, RunState, RunTrigger } from '../workflows/types.ts';
import { type DecisionBody, DecisionInput } from './approval-input.ts';
import { startExecution } from './execution.ts';
import { reconcileRun } from './run-sweep.ts';
import { buildSnapshot } from './snapshot.ts';
import { startFailureReason, startMayHaveHappened } from './start-failure.ts';

type RunDeps = Pick<Deps, 'sql' | 'config' | 'temporal' | 'logger'>;

/** How long the API waits for a running run's live state before answering from the store. */
const LIVE_STATE_TIMEOUT_MS = 3000;

function temporalOf(deps: RunDeps): TemporalHandle {
  if (!deps.temporal)
    throw new AppError(503, 'unavailable', 'Service unavailable', 'Temporal is not reachable');
  return deps.temporal;
}

/** Writes a start's audit event, in the transaction that records the run (launch). */
export type RecordStart = (tx: Tx) => Promise<unknown>;

/** The caller's Idempotency-Key of a start (draft-ietf-httpapi-idempotency-key-header). */
export interface StartKey {
  key: string;
}

/**
 * Starts a run with JSON inputs (SPEC.md 4.1 run endpoint), or with a page form's text values
 * (`from: 'form'`, read by the inputs' types): the one check of both doors is the workflow's
 * input definitions, here. Returns the run id. With an Idempotency-Key, a retry of the same
 * request by the same caller names the run the first one started (and makes sure it was
 * started); the same key with other inputs is refused.
 */
export async function startRun(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  rawInputs: Record<string, unknown>,
  idempotency: StartKey | null = null,
  from: 'json' | 'form' = 'json',
  dashboardId: string | null = null,
): Promise<string> {
  // run_permissions: a person who may not start it gets the 404 of a workflow that does not exist.
  const wf = await startableWorkflow(deps, caller, workflowId);
  const inputs = typedInputs(wf, rawInputs, from === 'form');
  return startTyped(
    deps,
    caller,
    wf,
    inputs,
    idempotency,
    (run) => (tx) =>
      recordEvent(tx, {
        orgId: wf.org_id,
        actor: caller.actor,
        origin: dashboardId ? 'dashboard' : 'user',
        event: 'run.started',
        subject: {
          workflow_id: wf.id,
          run_id: run.runId,
          trigger: run.trigger,
          input_keys: Object.keys(inputs),
          ...(dashboardId ? { dashboard_id: dashboardId } : {}),
        },
        outcome: 'allowed',
        detail: `started ${run.runId} (${run.trigger}${dashboardId ? `, dashboard ${dashboardId}` : ''})`,
      }),
  );
}

/** A start with checked inputs, its audit event built for the run it records. */
async function startTyped(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  wf: WorkflowRow,
  inputs: Record<string, string | number | boolean>,
  idempotency: StartKey | null,
  event: (run: { runId: string; trigger: RunTrigger }) => RecordStart,
): Promise<string> {
  const run = {
    runId: newId('run'),
    trigger: (caller.actor.viaApiKeyId !== undefined ? 'api' : 'manual') as RunTrigger,
    // A key's run is its owner's (or, acting for someone, that person's), with the key beside them.
    initiatorUserId: caller.actor.userId,
    initiatorApiKeyId: caller.actor.viaApiKeyId ?? null,
    inputs,
  };
  if (!idempotency) {
    await launch(deps, wf, run, event(run));
    return run.runId;
  }
  const key = {
    // A key is its own caller (two keys of one owner are two clients), a person in person theirs;
    // a key acting for someone is a caller per person it acts for.
    caller:
      caller.actor.viaApiKeyId !== undefined
        ? `key:${caller.actor.viaApiKeyId}${caller.actor.actingKeyOwnerId !== undefined ? `:as:${caller.actor.userId}` : ''}`
        : `user:${caller.actor.userId}`,
    key: idempotency.key,
    requestHash: requestHash(inputs),
  };
  const earlier = await findIdempotentRun(deps.sql, wf.id, key.caller, key.key);
  if (earlier) return replayStart(deps, earlier, key.requestHash);
  return launch(deps, wf, run, event(run), key);
}

/** The answer to a repeated key: the earlier run, started now if its start was cut short. */
async function replayStart(
  deps: RunDeps,
  earlier: { run_id: string; request_hash: string },
  requestHash: string,
): Promise<string> {
  // The draft's error handling: a key reused with another request payload is a 422.
  if (earlier.request_hash !== requestHash)
    throw validationFailed([
      {
        path: 'Idempotency-Key',
        message: 'this key was used for a run with other inputs: use a new key for a new run',
      },
    ]);
  await resumeStart(deps, earlier.run_id);
  return earlier.run_id;
}

/** Inputs in a canonical order, hashed: what makes two requests with one key the same request. */
function requestHash(inputs: Record<string, string | number | boolean>): string {
  const sorted = Object.keys(inputs)
    .sort()
    .map((k) => [k, inputs[k]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

/** Checks input values against the definition's types: a 422 naming the input. */
export function typedInputs(wf: WorkflowRow, raw: Record<string, unknown>, fromText: boolean) {
  try {
    return parseInputs(wf.inputs, raw, { fromText });
  } catch (err) {
    if (err instanceof InputError) throw validationFailed([{ path: err.input ?? '', message: err.reason }]);
    throw err;
  }
}

/**
 * Records the run with its snapshot and its start's audit event (one transaction; a run id
 * recorded already, as a redelivered tracker webhook's, records neither again), then starts its
 * Temporal execution under the run id. A process that stops in between leaves a row the run sweep
 * starts (automation/run-sweep.ts), so a row never waits forever for an execution; a start Temporal
 * refuses outright leaves the row failed, which the event's run then shows. Returns the run id:
 * with an idempotency key taken by a concurrent request, that request's run.
 */
export async function launch(
  deps: RunDeps,
  wf: WorkflowRow,
  run: {
    runId: string;
    trigger: RunTrigger;
    initiatorUserId: string | null;
    initiatorApiKeyId: string | null;
    inputs: Record<string, string | number | boolean>;
    resume?: RunSnapshot['resume'];
  },
  record: RecordStart,
  idempotency?: IdempotentStart,
): Promise<string> {
  if (wf.archived_at) throw conflict('the workflow is archived and can no longer run');
  const temporal = temporalOf(deps);
  const snapshot = { ...buildSnapshot(deps.config, wf, run), ...(run.resume ? { resume: run.resume } : {}) };
  const row = {
    id: run.runId,
    workflow_id: wf.id,
    org_id: wf.org_id,
    trigger: run.trigger,
    initiator_user_id: run.initiatorUserId,
    initiator_api_key_id: run.initiatorApiKeyId,
    inputs: run.inputs,
  };
  if (idempotency) {
    const taken = await insertRunWithKey(deps.sql, row, snapshot, idempotency, record);
    if (!taken.created) return replayStart(deps, taken, idempotency.requestHash);
  } else {
    await inTransaction(deps.sql, async (tx) => {
      if (await runStore.insertRun(tx, row, snapshot)) await record(tx);
    });
  }
  try {
    await startExecution(temporal, snapshot);
  } catch (err) {
    const reason = startFailureReason(err);
    if (startMayHaveHappened(err)) {
      deps.logger.warn({ reason, runId: run.runId }, 'run start unanswered; the run sweep settles it');
      throw new AppError(
        503,
        'unavailable',
        'Service unavailable',
        `run ${run.runId} was recorded but Temporal did not answer its start (${reason}); it starts or settles within a minute: read it rather than starting it again`,
      );
    }
    await runStore.failRunStart(deps.sql, run.runId, `the run could not be started: ${reason}`);
    deps.logger.error({ reason, runId: run.runId }, 'run start failed');
    throw new AppError(503, 'unavailable', 'Service unavailable', `the run could not be started: ${reason}`);
  }
  return run.runId;
}

/** Starts a recorded run whose start may have been cut short (a replayed idempotent request). */
async function resumeStart(deps: RunDeps, runId: string): Promise<void> {
  const pending = await runStore.pendingSnapshot(deps.sql, runId);
  if (pending) await startExecution(temporalOf(deps), pending);
}

/**
 * A run as its reader may see it (outputs redacted by their policy, governance/protection/run-output.ts); while
 * it runs, the live state comes from the workflow's query.
 */
export interface RunView {
  row: SeenRunRow;
  state: RunState | null;
}

/**
 * A run row as its reader may see it: the inputs, unless they may carry values the reader's
 * policy hides (run-output.ts valuesRefusal), in which case none and why.
 */
export type SeenRunRow = runStore.WorkflowRunRow & { inputs_hidden: string | null };

async function seenRow(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  row: runStore.WorkflowRunRow,
  state: RunState | null,
  memo?: Map<string, Promise<string | null>>,
): Promise<SeenRunRow> {
  const seen = await redactRun(deps, readerOf(caller), state, row.error, origin(row));
  const why =
    Object.keys(row.inputs).length > 0
      ? await valuesRefusal(deps, readerOf(caller), state, origin(row), memo)
      : null;
  return {
    ...row,
    error: seen.error,
    inputs: why === null ? row.inputs : {},
    inputs_hidden: why === null ? null : `The inputs are hidden because they may carry values: ${why}.`,
  };
}

export async function getRun(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  runId: string,
): Promise<RunView> {
  await readableWorkflow(deps, caller, workflowId);
  let row = await runStore.findRun(deps.sql, caller.orgId, workflowId, runId);
  if (!row) throw notFound('no such run');
  if (row.finished_at === null && deps.temporal && (await reconcileOnRead(deps, deps.temporal, row)))
    row = (await runStore.findRun(deps.sql, caller.orgId, workflowId, runId)) ?? row;
  const state = row.state !== null || !deps.temporal ? row.state : await liveState(deps.temporal, runId);
  const seen = await redactRun(deps, readerOf(caller), state, row.error, origin(row));
  return { row: await seenRow(deps, caller, row, state), state: seen.state };
}

/**
 * Reconciles an unfinished run with Temporal before showing it (an execution ended from outside
 * shows as such at once); true when the row changed. A Temporal that does not answer leaves the
 * stored status, which the sweep settles later.
 */
async function reconcileOnRead(
  deps: RunDeps,
  temporal: TemporalHandle,
  row: runStore.WorkflowRunRow,
): Promise<boolean> {
  try {
    return (await reconcileRun({ ...deps, temporal }, row)) !== 'running';
  } catch {
    return false;
  }
}

/** The caller as run-output.ts judges a reader. */
function readerOf({ orgId, actor }: Caller<PersonActor>) {
  return { kind: 'user' as const, orgId, userId: actor.userId, role: actor.role };
}

/** What redactRun needs to know of a run to judge who may read its errors. */
function origin(row: runStore.WorkflowRunRow) {
  return { orgId: row.org_id, workflowId: row.workflow_id, initiatorUserId: row.initiator_user_id };
}

async function liveState(temporal: TemporalHandle, runId: string): Promise<RunState | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), LIVE_STATE_TIMEOUT_MS);
  });
  const query = temporal.client.workflow.getHandle(runId).query(stateQuery);
  // When the timeout wins the race the query keeps going; its late failure (e.g. the connection
  // closing at shutdown) must not surface as an unhandled rejection.
  query.catch(() => {});
  try {
    return await Promise.race([query, timeout]);
  } catch {
    // No worker, or the run's history is gone: the stored status is all there is.
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs of a workflow the caller may read; errors redacted like getRun's. */
export async function listRuns(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  page: { before?: string | undefined; limit: number },
): Promise<SeenRunRow[]> {
  await readableWorkflow(deps, caller, workflowId);
  const rows = await runStore.listRuns(deps.sql, caller.orgId, workflowId, page);
  const memo = new Map<string, Promise<string | null>>();
  return Promise.all(rows.map((r) => seenRow(deps, caller, r, r.state, memo)));
}

/**
 * Runs of every workflow the person may read, filtered, newest first, each redacted for them
 * like a single run (the Workflow runs page).
 */
export async function listReadableRuns(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflows: WorkflowRow[],
  filter: Omit<runStore.RunFilter, 'workflowIds'> & { workflowId?: string | undefined },
): Promise<SeenRunRow[]> {
  const readable = workflows.filter((wf) => mayRead(caller.actor, wf)).map((wf) => wf.id);
  const ids = filter.workflowId ? readable.filter((id) => id === filter.workflowId) : readable;
  const rows = await runStore.listOrgRuns(deps.sql, caller.orgId, { ...filter, workflowIds: ids });
  const memo = new Map<string, Promise<string | null>>();
  return Promise.all(rows.map((r) => seenRow(deps, caller, r, r.state, memo)));
}

/**
 * Re-runs a run: a new run of the same workflow with the given inputs (text from a form, typed
 * values from JSON), or the original run's inputs when none are given. The same rules as any start
 * (who may start it, input types); the new run names the one it repeats in the audit log.
 */
export async function rerunRun(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  runId: string,
  inputs: { values: Record<string, unknown>; fromText: boolean } | null,
): Promise<string> {
  const wf = await startableWorkflow(deps, caller, workflowId);
  const original = await runStore.findRun(deps.sql, caller.orgId, workflowId, runId);
  if (!original) throw notFound('no such run');
  const values = inputs ? typedInputs(wf, inputs.values, inputs.fromText) : original.inputs;
  // One event for the start: the re-run names the run it repeats (no run.started beside it).
  return startTyped(
    deps,
    caller,
    wf,
    values,
    null,
    (run) => (tx) =>
      recordEvent(tx, {
        orgId: caller.orgId,
        actor: caller.actor,
        origin: 'user',
        event: 'run.rerun',
        subject: { workflow_id: workflowId, run_id: run.runId, rerun_of: runId },
        outcome: 'allowed',
        detail: `re-ran ${runId} as ${run.runId}`,
      }),
  );
}

/**
 * Retries a failed run from the step that failed: a new run of the same definition and
 * inputs whose completed steps are not run again — their outputs are reused. Only the person who
 * started the run may retry it (with their key or not: a key's run is its owner's), and it runs as
 * them again, so the reused outputs, computed under their data-protection policy, never feed
 * steps run as someone else. Refused when the definition changed before the failed step: a
 * completed step would then have to run again (re-run instead).
 */
export async function retryRun(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  runId: string,
): Promise<string> {
  // Still allowed to start it: run_permissions may have changed since.
  const wf = await startableWorkflow(deps, caller, workflowId);
  const row = await runStore.findRun(deps.sql, caller.orgId, workflowId, runId);
  if (!row) throw notFound('no such run');
  const starter = row.initiator_user_id === caller.actor.userId;
  if (!starter) throw forbidden('only who started the run may retry it; start a new run instead');
  const fromIndex = row.state?.steps.findIndex((s) => s.status === 'failed') ?? -1;
  const failedStep = row.state?.steps[fromIndex];
  // A rejection is a person's decision (or an expiry recorded as one): running the approval
  // again would only replay it. Runs recorded before `rejected` existed ended `failed`.
  if (
    row.status === 'rejected' ||
    (failedStep && row.state?.approvals.some((a) => a.step === failedStep.name && a.decision === 'reject'))
  )
    throw conflict(
      `the run was rejected at step ${failedStep?.name ?? '?'}: a rejection is final, start a new run to ask again`,
    );
  if ((row.status !== 'failed' && row.status !== 'expired') || !row.state)
    throw conflict(
      row.state || row.status !== 'failed'
        ? `only a failed or expired run can be retried (this one ${row.status})`
        : 'the run never started a step: start a new run',
    );
  if (fromIndex < 0) throw conflict('no step failed (a condition ended the run): start a new run');
  const same = row.state.steps
    .slice(0, fromIndex + 1)
    .every((s, i) => wf.steps[i]?.id === s.id && wf.steps[i]?.name === s.name);
  if (!same)
    throw conflict(
      'the workflow changed before the failed step, so completed steps would run again: re-run it instead',
    );
  const newRun = newId('run');
  const fromStep = row.state.steps[fromIndex]!.name;
  // One event for the start: the retry names the run it resumes (no run.started beside it).
  await launch(
    deps,
    wf,
    {
      runId: newRun,
      trigger: row.trigger,
      initiatorUserId: row.initiator_user_id,
      initiatorApiKeyId: caller.actor.viaApiKeyId ?? row.initiator_api_key_id,
      inputs: row.inputs,
      resume: { retryOf: row.id, fromIndex, steps: row.state.steps, approvals: row.state.approvals },
    },
    (tx) => recordEvent(tx, retryEvent(caller, wf.id, row.id, newRun, fromStep)),
  );
  return newRun;
}

function retryEvent(
  caller: Caller<PersonActor>,
  workflowId: string,
  retryOf: string,
  runId: string,
  fromStep: string,
) {
  return {
    orgId: caller.orgId,
    actor: caller.actor,
    origin: 'user' as const,
    event: 'run.retry' as const,
    subject: { workflow_id: workflowId, run_id: runId, retry_of: retryOf, from_step: fromStep },
    outcome: 'allowed' as const,
    detail: `retried ${retryOf} from step ${fromStep} as ${runId}`,
  };
}

/** Asks the run to stop; the run records itself as canceled (steps in flight are canceled). */
export async function cancelRun(
  deps: RunDeps,
  caller: Caller<PersonActor>,
  workflowId: string,
  runId: string,
): Promise<void> {
  // Whoever may start the workflow may stop its runs; admins may stop any.
  const wf = await readableWorkflow(deps, caller, workflowId);
  if (!mayStart(caller.actor, wf) && !actorIsAdmin(caller.actor)) throw notFound('no such workflow');
  const row = await runStore.findRun(deps.sql, caller.orgId, workflowId, runId);
  if (!row) throw notFound('no such run');
  if (row.finished_at !== null) throw conflict(`the run has already ended (${row.status})`);
  const event = (beforeStart: boolean) => ({
    orgId: caller.orgId,
    actor: caller.actor,
    origin: 'user' as const,
    event: 'run.canceled' as const,
    subject: { workflow_id: wf.id, run_id: runId, status: row.status, before_start: beforeStart },
    outcome: 'allowed' as const,
    detail: beforeStart ? `canceled ${runId} before it started` : `asked ${runId} to cancel`,
  });
  try {
    await temporalOf(deps).client.workflow.getHandle(runId).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // A row whose execution was never started: canceling it settles it, with its event.
    const settled = await inTransaction(deps.sql, async (tx) => {
      if (!(await runStore.settleRun(tx, runId, 'canceled', 'the run was canceled before it started')))
        return false;
      await recordEvent(tx, event(true));
      return true;
    });
    if (settled) return;
    throw conflict('the run has already ended');
  }
  // After Temporal accepted the request, never before: the event must not claim a cancel Temporal
  // refused. The store write that follows is the run's own (it records itself canceled), so there
  // is no transaction to share; a store failure here fails the request, the cancel standing.
  await recordEvent(deps.sql, event(false));
}

/**
 * An approver's decision on the approval step the run waits on, delivered as a Temporal update.
 * The workflow's validator decides who may approve (permitted, not the initiator, once each).
 */
export async function decideApproval(
  deps: RunDeps,
  principal: Principal,
  workflowId: string,
  runId: string,
  raw: DecisionBody,
): Promise<{ approvals: number; required: number }> {
  // Input errors come before lookups, as on every other door.
  const decision = parseInput(DecisionInput, raw);
  // Approvals are a person's own act: a key acting for someone else (x-act-as-user) or a service
  // account would let one holder approve as anybody.
  if (principal.actedBy || principal.serviceAccount)
    throw forbidden('approvals are made by people: use your own personal token, session or key');
  const caller = principalCaller(principal);
  await readableWorkflow(deps, caller, workflowId);
  const row = await runStore.findRun(deps.sql, caller.orgId, workflowId, runId);
  if (!row) throw notFound('no such run');
  if (row.finished_at !== null) throw conflict(`the run has already ended (${row.status})`);
  let accepted: { approvals: number; required: number; step: string };
  try {
    // The role is the one authentication read from the store for this request (a disabled
    // person's credentials fail there): the validator judges the approver as they are now.
    accepted = await temporalOf(deps)
      .client.workflow.getHandle(runId)
      .executeUpdate(approveUpdate, {
        args: [{ user_id: principal.userId, email: principal.email, role: principal.role, ...decision }],
      });
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : null;
    if (cause instanceof ApplicationFailure && cause.type === NOT_PERMITTED) throw forbidden(cause.message);
    if (cause instanceof ApplicationFailure && cause.type === NOT_WAITING) throw conflict(cause.message);
    if (err instanceof WorkflowNotFoundError) throw conflict('the run has already ended');
    throw err;
  }
  // Recorded once the run accepted the decision (the update returned: its validator passed and
  // the decision is in the run's history), never before: the event must not claim a decision the
  // run refused. The decision lives in Temporal, not in a store row, so there is no transaction
  // to share; a store failure here fails the request with the decision standing.
  await recordEvent(deps.sql, {
    orgId: caller.orgId,
    actor: caller.actor,
    origin: 'user',
    event: 'run.approval_decided',
    subject: {
      workflow_id: workflowId,
      run_id: runId,
      step: accepted.step,
      decision: decision.decision,
      commented: (decision.comment ?? '').trim() !== '',
      approvals: accepted.approvals,
      required: accepted.required,
    },
    outcome: 'allowed',
    detail: `${decision.decision === 'approve' ? 'approved' : 'rejected'} step ${accepted.step} of ${runId}`,
  });
  return { approvals: accepted.approvals, required: accepted.required };
}
