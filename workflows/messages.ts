// Temporal messages of the interpreter, defined beside it and imported by the API (STYLE.md 10).
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ApprovalInput, RunState } from './types.ts';

/** The run's live state: status, each step's status, output, error and timing, approvals so far. */
export const stateQuery = defineQuery<RunState>('state');

/**
 * An approval or rejection of the approval step the run is waiting on. The validator rejects an
 * approver who is not permitted, the run's initiator, or a second decision by the same person,
 * so the API caller learns synchronously; nothing is written to history for a rejected update.
 */
export const approveUpdate = defineUpdate<
  { approvals: number; required: number; step: string },
  [ApprovalInput]
>('approve');

/** Failure types the validator uses; the API maps them to 403 and 409. */
export const NOT_PERMITTED = 'NotPermitted';
export const NOT_WAITING = 'NotWaitingForApproval';
