import type { Deps } from '../core/deps.ts';
import { outboundPolicy } from '../core/outbound/policy.ts';
import { createChatClient } from '../integrations/chat.ts';
import type { RunState } from '../workflows/types.ts';
import { type ApiStepInput, callApiStep } from './api.ts';
import { asFailure } from './failures.ts';
import { planQueryStep, type QueryStepInput, runQueryStep } from './query.ts';
import { beginScheduledRun, finishRun, setRunStatus } from './runs.ts';

/** What activities need: the store, secrets, the target-database pools and the configuration. */
export type ActivityDeps = Pick<Deps, 'sql' | 'keyring' | 'logger' | 'config' | 'pools'>;

/**
 * Activities come from a factory so tests pass their own dependencies (STYLE.md: Temporal).
 * One function per step kind, plus run bookkeeping. Known errors become typed failures so the
 * retry policies can tell "try again" from "this will never work" (activities/failures.ts).
 */
export function createActivities(deps: ActivityDeps) {
  const chat = createChatClient(deps.config, outboundPolicy(deps.config));
  const mapped =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        throw asFailure(err);
      }
    };
  return {
    runQueryStep: mapped((input: QueryStepInput) => runQueryStep(deps, input)),
    planQueryStep: mapped(
      (input: Pick<QueryStepInput, 'orgId' | 'credentialId' | 'query' | 'timeoutSeconds' | 'ctx'>) =>
        planQueryStep(deps, input),
    ),
    callApiStep: mapped((input: ApiStepInput) => callApiStep(deps, input)),
    postChatMessage: mapped((input: { channel: string; text: string; threadTs: string | null }) =>
      chat.post(input),
    ),
    setRunStatus: (runId: string, status: 'running' | 'waiting_for_approval') =>
      setRunStatus(deps, runId, status),
    finishRun: (runId: string, state: RunState) => finishRun(deps, runId, state),
    beginScheduledRun: (input: { workflowId: string; runId: string }) => beginScheduledRun(deps, input),
  };
}

export type Activities = ReturnType<typeof createActivities>;
