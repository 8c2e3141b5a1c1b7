// The interpreter: one Temporal workflow that runs any workflow definition from the snapshot it was
// started with (DESIGN.md "Workflows on Temporal"). Deterministic: it imports `expr/` and types only.
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  setHandler,
} from '@temporalio/workflow';
import { evaluateCondition } from '../expr/index.ts';
import { EXACTLY_ONCE_PATCH, LOCAL_STEPS_PATCH } from './activity-options.ts';
import { refuseApproval } from './approval.ts';
import { fullContext, messageOf, unsetInputsOf } from './context.ts';
import { approveUpdate, NOT_PERMITTED, NOT_WAITING, stateQuery } from './messages.ts';
import { ApprovalEnded, activitiesFor, runStep, type StepRuntime, StopRun } from './steps.ts';
import type { RunSnapshot, RunState, StepDefinition } from './types.ts';

/** Runs the steps of `snapshot` in order; resolves with the final state, or fails/cancels as the run did. */
export async function interpretWorkflow(snapshot: RunSnapshot): Promise<RunState> {
  const state: RunState = {
    status: 'running',
    error: null,
    steps: snapshot.steps.map((s) => ({
      id: s.id,
      name: s.name,
      type: s.action.__type__,
      status: 'pending',
      output: null,
      error: null,
      started_at: null,
      finished_at: null,
    })),
    approvals: [],
  };
  const resume = snapshot.resume;
  if (resume) {
    // Completed steps of the failed run keep their states; nothing before fromIndex runs again.
    for (let i = 0; i < resume.fromIndex; i++) if (resume.steps[i]) state.steps[i] = { ...resume.steps[i]! };
    state.approvals = [...resume.approvals];
  }
  // Asked once, first: a run's answer must not change between its start and a later replay.
  const runtime: StepRuntime = {
    snapshot,
    state,
    waitingFor: null,
    localSteps: patched(LOCAL_STEPS_PATCH),
    onceSteps: patched(EXACTLY_ONCE_PATCH),
  };
  setHandler(stateQuery, () => state);
  setHandler(
    approveUpdate,
    (who) => {
      const step = runtime.waitingFor as StepDefinition;
      state.approvals.push({
        step: step.name,
        user_id: who.user_id,
        email: who.email,
        decision: who.decision,
        comment: who.comment,
        at: new Date().toISOString(),
      });
      const approvals = state.approvals.filter(
        (a) => a.step === step.name && a.decision === 'approve',
      ).length;
      return {
        approvals,
        required: step.action.__type__ === 'approval' ? step.action.reviews_required : 0,
        // The step decided, for the audit event the API records once the update is accepted.
        step: step.name,
      };
    },
    {
      // Runs before anything is written to history: an unauthorized approver is refused synchronously.
      validator: (who) => {
        const step = runtime.waitingFor;
        const refusal = refuseApproval({
          who,
          waitingStep: step?.name ?? null,
          permissions: step?.permissions ?? [],
          initiatorUserId: snapshot.initiatorUserId,
          approvals: state.approvals,
        });
        if (refusal) {
          throw ApplicationFailure.create({
            type: refusal.kind === 'not_waiting' ? NOT_WAITING : NOT_PERMITTED,
            message: refusal.message,
            nonRetryable: true,
          });
        }
      },
    },
  );

  let current = -1;
  let failure: unknown = null;
  try {
    for (current = resume?.fromIndex ?? 0; current < snapshot.steps.length; current++) {
      const step = snapshot.steps[current]!;
      const st = state.steps[current]!;
      const unset = unsetInputsOf(step, snapshot.unsetInputs ?? []);
      if (unset.length > 0)
        throw new Error(
          `needs input ${unset.join(', ')}, which this run has no value for: a scheduled run gets none for an input without a default`,
        );
      // SPEC.md 2.1: a step whose condition is false is skipped.
      if (step.condition !== null && !evaluateCondition(step.condition, fullContext(snapshot, state))) {
        st.status = 'skipped';
        continue;
      }
      st.status = 'running';
      st.started_at = new Date().toISOString();
      try {
        st.output = await runStep(runtime, step);
        st.status = 'succeeded';
      } finally {
        st.finished_at = new Date().toISOString();
      }
    }
    state.status = 'succeeded';
  } catch (err) {
    failure = err;
    const st = state.steps[current];
    if (err instanceof StopRun) {
      if (st) {
        st.status = 'succeeded';
        // Say why the run ended here: the run view shows it.
        st.output = { result: false, ended_run_as: err.status };
      }
      for (const rest of state.steps.slice(current + 1)) rest.status = 'skipped';
      state.status = err.status;
      state.error = err.error;
    } else if (err instanceof ApprovalEnded) {
      if (st) {
        st.status = 'failed';
        st.error = err.error;
      }
      state.status = err.status;
      state.error = st ? `step ${st.name}: ${err.error}` : err.error;
    } else if (isCancellation(err)) {
      if (st) st.status = 'canceled';
      state.status = 'canceled';
      state.error = 'the run was canceled';
    } else {
      if (st) {
        st.status = 'failed';
        st.error = messageOf(err);
      }
      state.status = 'failed';
      state.error = st ? `step ${st.name}: ${messageOf(err)}` : messageOf(err);
    }
  }
  // Recorded even when the run was canceled: the store must learn how every run ended.
  await CancellationScope.nonCancellable(() => activitiesFor(runtime).finishRun(snapshot.runId, state));
  if (state.status === 'canceled') throw failure;
  if (state.status === 'failed' || state.status === 'rejected' || state.status === 'expired') {
    // Fail the Temporal execution too, so the Temporal UI and visibility agree with the store.
    throw ApplicationFailure.create({
      type:
        state.status === 'failed' ? 'RunFailed' : state.status === 'rejected' ? 'RunRejected' : 'RunExpired',
      message: state.error ?? 'failed',
      nonRetryable: true,
    });
  }
  return state;
}
