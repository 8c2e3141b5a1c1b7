// Timeouts and retry policies per step kind (workflows/README.md "Retries"). Failures an activity
// marks non-retryable (bad SQL, a refused address, an unexpected status, an expression error)
// fail the step at once; transport-level failures are retried with backoff.
import type { ActivityOptions } from '@temporalio/workflow';

/** Seconds a step may take when it sets no timeout of its own. */
export const DEFAULT_STEP_TIMEOUT_SECONDS = 30;

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

/** Activity options of a query step: the statement timeout plus room to connect and audit. */
export function queryOptions(timeoutSeconds: number | null, summary: string): ActivityOptions {
  return {
    startToCloseTimeout: `${(timeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS) + 10} seconds`,
    retry: {
      maximumAttempts: 3,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
    summary,
  };
}

/** An API request is not idempotent in general: only failures to connect or time-outs retry, twice. */
export function apiOptions(timeoutSeconds: number | null, summary: string): ActivityOptions {
  return {
    startToCloseTimeout: `${(timeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS) + 5} seconds`,
    retry: {
      maximumAttempts: 3,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
    summary,
  };
}

/** Chat APIs rate-limit; a few spaced retries ride that out. */
export function chatOptions(summary: string): ActivityOptions {
  return {
    startToCloseTimeout: '30 seconds',
    retry: {
      maximumAttempts: 5,
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
    summary,
  };
}

/** Run bookkeeping writes to the store: retried until the store is back (a run must be recorded). */
export const BOOKKEEPING_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  },
};
