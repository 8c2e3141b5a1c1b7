// Timeouts and retry policies per step kind (workflows/README.md "Retries"), and where each step
// runs: as a regular activity, or as a local activity inside the workflow task (workflows/README.md
// "Local activities"). Failures an activity marks non-retryable (bad SQL, a refused address, an
// unexpected status, an expression error) fail the step at once; transport-level failures are
// retried with backoff.
import type { ActivityOptions } from '@temporalio/workflow';

/** Seconds a step may take when it sets no timeout of its own. */
export const DEFAULT_STEP_TIMEOUT_SECONDS = 30;

/**
 * Runs started before local activities existed have regular activities in their history; the
 * interpreter asks `patched(LOCAL_STEPS_PATCH)` once so that their replay after a deploy issues
 * the same commands as before (Temporal refuses a replay that differs).
 */
export const LOCAL_STEPS_PATCH = 'local-steps-v1';

/**
 * A step with its own timeout at most this long runs as a local activity. Its attempt (timeout
 * plus LOCAL_ROOM_SECONDS) then fits inside the workflow task timeout (10 s), which a local
 * activity holds open; longer steps would need the task heartbeated and gain nothing.
 */
export const LOCAL_STEP_MAX_SECONDS = 5;
const LOCAL_ROOM_SECONDS = 3;

/**
 * Runs that began before exactly-once query steps schedule query steps as before on replay; the
 * interpreter asks `patched(EXACTLY_ONCE_PATCH)` once at the start, like LOCAL_STEPS_PATCH.
 */
export const EXACTLY_ONCE_PATCH = 'exactly-once-query-v1';

/**
 * A query step heartbeats every second while it runs (activities/query.ts): a worker that died
 * is noticed after this long, and the step's next attempt starts on another worker.
 */
const QUERY_HEARTBEAT_TIMEOUT = '5 seconds';
/** Beyond the statement timeout: connecting, ending an earlier attempt's session, the audit. */
const QUERY_ROOM_SECONDS = 15;

/** Options that mean the same for a regular and a local activity. */
export type StepActivityOptions = Pick<
  ActivityOptions,
  'startToCloseTimeout' | 'heartbeatTimeout' | 'retry' | 'summary'
>;

/** Where and how a step's activity runs. */
export interface StepPlacement {
  local: boolean;
  options: StepActivityOptions;
}

function isShort(timeoutSeconds: number | null): timeoutSeconds is number {
  return timeoutSeconds !== null && timeoutSeconds <= LOCAL_STEP_MAX_SECONDS;
}

/** Non-retryable failure types raised by activities (activities/failures.ts). */
export const NON_RETRYABLE_TYPES = [
  'ValidationError',
  'NotFound',
  'QueryDenied',
  'QueryError',
  'UnexpectedStatus',
  'AddressRefused',
  'ChatError',
  'DefinitionGone',
];

const STEP_RETRY = {
  maximumAttempts: 3,
  initialInterval: '1 second',
  backoffCoefficient: 2,
  nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
} as const;

/**
 * A step with a timeout of its own: local when that is short, else a regular activity given
 * `room` seconds beyond the step's (or the default) timeout.
 */
function timedStep(timeoutSeconds: number | null, room: number, summary: string): StepPlacement {
  if (isShort(timeoutSeconds))
    return {
      local: true,
      options: {
        startToCloseTimeout: `${timeoutSeconds + LOCAL_ROOM_SECONDS} seconds`,
        retry: STEP_RETRY,
        summary,
      },
    };
  return {
    local: false,
    options: {
      startToCloseTimeout: `${(timeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS) + room} seconds`,
      retry: STEP_RETRY,
      summary,
    },
  };
}

/**
 * A query step of a run begun before exactly-once steps (replay only): the step's own timeout,
 * else 30 s, plus room. Local when the step sets a short timeout of its own.
 */
export function queryOptions(timeoutSeconds: number | null, summary: string): StepPlacement {
  return timedStep(timeoutSeconds, 10, summary);
}

/** What the interpreter learns before a query step (activities/query.ts planQueryStep). */
export interface QueryPlan {
  timeoutSeconds: number;
  readOnly: boolean;
}

/**
 * A query step, placed by the statement timeout it really runs under (its own, else its
 * credential's): Temporal's attempt timeout is that plus room, so an attempt is never abandoned
 * while its statement may still commit. Writes are always regular activities — a local
 * activity's attempt is replayed with its workflow task and cannot be settled once — and every
 * regular one heartbeats. Reads with a short timeout run locally, as before.
 */
export function queryPlacement(plan: QueryPlan, summary: string): StepPlacement {
  if (plan.readOnly && plan.timeoutSeconds <= LOCAL_STEP_MAX_SECONDS)
    return {
      local: true,
      options: {
        startToCloseTimeout: `${plan.timeoutSeconds + LOCAL_ROOM_SECONDS} seconds`,
        retry: STEP_RETRY,
        summary,
      },
    };
  return {
    local: false,
    options: {
      startToCloseTimeout: `${plan.timeoutSeconds + QUERY_ROOM_SECONDS} seconds`,
      heartbeatTimeout: QUERY_HEARTBEAT_TIMEOUT,
      retry: STEP_RETRY,
      summary,
    },
  };
}

/**
 * An API request is not idempotent in general: only failures to connect or time-outs retry (the
 * rest are non-retryable types). Local when the step sets a short timeout of its own.
 */
export function apiOptions(timeoutSeconds: number | null, summary: string): StepPlacement {
  return timedStep(timeoutSeconds, 5, summary);
}

/**
 * Chat APIs rate-limit; a few spaced retries ride that out. A chat message is one or two short
 * requests, so it runs locally; only a chat service slower than the workflow task timeout makes
 * the worker heartbeat the task (the client gives up after 20 s), and the retries' backoff (30 s
 * in all) stays inside the worker.
 */
export function chatOptions(summary: string): StepPlacement {
  return {
    local: true,
    options: {
      startToCloseTimeout: '30 seconds',
      retry: {
        maximumAttempts: 5,
        initialInterval: '2 seconds',
        backoffCoefficient: 2,
        nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
      },
      summary,
    },
  };
}

/**
 * Run bookkeeping writes to the store: retried until the store is back (a run must be recorded).
 * One idempotent statement: local (in runs with LOCAL_STEPS_PATCH); backoff past a minute becomes
 * a Temporal timer, so a long store outage does not hold a workflow task open.
 */
export const BOOKKEEPING_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  },
};

/** Planning a query step: one read of the store, local, retried like bookkeeping. */
export const PLAN_OPTIONS: ActivityOptions = { ...BOOKKEEPING_OPTIONS, summary: 'plan query step' };
