// The Temporal dynamic-config values the service relies on for workflow latency (README
// "What a Temporal cluster needs"). Dev mode and the test harness start their dev server with
// them; a production cluster sets the same keys in its dynamic-config file.

/**
 * Without these a three-step run takes ~350 ms on an idle server, nearly all of it spent waiting:
 *
 * - `history.transferProcessorMaxPollRPS` (default 20 per shard): every workflow and activity task
 *   is handed to matching through the shard's transfer queue, whose reader may poll only this
 *   often. The successive tasks of one run are on one shard, so at 20/s each waits up to 50 ms
 *   for its turn (37–39 ms measured). A run's tasks come in bursts of a few, far below the raised
 *   rate, so raising it costs a busy shard more, smaller reads of its queue and nothing else.
 * - `system.enableActivityEagerExecution` (default false): an activity scheduled on the worker's
 *   own task queue is returned in the reply to the workflow task that scheduled it, skipping the
 *   transfer queue and matching altogether.
 * - `system.enableEagerWorkflowStart` (default true in servers 1.29 and 1.30; set so an older default or an
 *   operator's override does not silently add a round trip): a start from a client that shares
 *   its connection with a worker gets the first workflow task in the start reply.
 */
export const LATENCY_DYNAMIC_CONFIG = {
  'history.transferProcessorMaxPollRPS': 1000,
  'system.enableActivityEagerExecution': true,
  'system.enableEagerWorkflowStart': true,
} as const satisfies Record<string, number | boolean>;

/** `--dynamic-config-value KEY=VALUE` arguments of `temporal server start-dev` (values are JSON). */
export function dynamicConfigArgs(
  values: Record<string, number | boolean | string> = LATENCY_DYNAMIC_CONFIG,
) {
  return Object.entries(values).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}
