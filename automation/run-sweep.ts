// Keeps the store's run statuses true to Temporal (DESIGN.md "Workflows on Temporal"). A run row
// is written before its execution is started, and a run records its own end through an activity;
// this sweep settles what neither covers: a row whose execution was never started (the process
// stopped in between) and an execution ended from outside (terminated, timed out, canceled in the
// Temporal UI or CLI). Every replica may run it: rows are claimed by a lease (checked_at), and
// each action is idempotent.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Deps } from '../core/deps.ts';
import type { TemporalHandle } from '../core/temporal.ts';
import { pruneIdempotencyKeys } from '../store/run-idempotency.ts';
import * as runStore from '../store/workflow-runs.ts';
import { stateQuery } from '../workflows/messages.ts';
import type { RunState } from '../workflows/types.ts';
import { startExecution } from './execution.ts';

type SweepDeps = Pick<Deps, 'sql' | 'logger'> & { temporal: TemporalHandle };

/** A row younger than this may still be starting in the process that wrote it: left alone. */
const MIN_AGE_SECONDS = 5;
/** Each unfinished run is checked at most this often. */
const RECHECK_SECONDS = 5;
/** Runs checked per pass (bounds the describe calls one pass makes). */
const BATCH = 25;
/** A row with no execution is started from its snapshot within this window, else it fails. */
const START_WINDOW_MS = 10 * 60_000;

export const NEVER_STARTED =
  'the run was never started: the service stopped between recording the run and starting it';

export type Settlement = 'running' | 'started' | 'settled' | 'recorded';

/**
 * Brings one unfinished run in line with Temporal: starts it when it has no execution yet (young
 * enough and its snapshot kept), records how it ended when its execution ended without recording
 * it, else leaves it.
 */
export async function reconcileRun(
  deps: SweepDeps,
  run: { id: string; started_at: Date },
): Promise<Settlement> {
  const handle = deps.temporal.client.workflow.getHandle(run.id);
  let status: string;
  try {
    // The latest execution of the run id: after a Reset that is the new, running one.
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // A start in progress in the process that wrote the row is not judged yet.
    if (Date.now() - run.started_at.getTime() < MIN_AGE_SECONDS * 1000) return 'running';
    const snapshot = await runStore.pendingSnapshot(deps.sql, run.id);
    if (snapshot && Date.now() - run.started_at.getTime() < START_WINDOW_MS) {
      await startExecution(deps.temporal, snapshot);
      deps.logger.warn({ runId: run.id }, 'started a run whose start was cut short');
      return 'started';
    }
    return settle(deps, run.id, 'failed', NEVER_STARTED);
  }
  switch (status) {
    case 'TERMINATED':
      return settle(
        deps,
        run.id,
        'canceled',
        'the run was terminated in Temporal, outside Countersign',
        true,
      );
    case 'CANCELLED':
      return settle(deps, run.id, 'canceled', 'the run was canceled in Temporal', true);
    case 'TIMED_OUT':
      return settle(deps, run.id, 'failed', "the run's Temporal execution timed out", true);
    case 'FAILED':
      return settle(
        deps,
        run.id,
        'failed',
        "the run's Temporal execution failed before recording its end",
        true,
      );
    case 'COMPLETED': {
      // The run's own record did not arrive; its result is the final state.
      const state = (await handle.result()) as RunState;
      await runStore.finishRun(deps.sql, run.id, state);
      return 'recorded';
    }
    default:
      return 'running';
  }
}

async function settle(
  deps: SweepDeps,
  id: string,
  status: 'failed' | 'canceled',
  reason: string,
  ended = false,
): Promise<Settlement> {
  const state = ended ? await lastState(deps.temporal, id, status, reason) : null;
  if (await runStore.settleRun(deps.sql, id, status, reason, state))
    deps.logger.warn({ runId: id, status, reason }, 'settled a run its execution did not record');
  return 'settled';
}

/**
 * The steps as the ended execution last had them (a query replays its history), with the steps
 * it was in the middle of marked as the run ended; null when no worker answers in time.
 */
async function lastState(
  temporal: TemporalHandle,
  id: string,
  status: 'failed' | 'canceled',
  reason: string,
): Promise<RunState | null> {
  let timer: NodeJS.Timeout | undefined;
  const query = temporal.client.workflow.getHandle(id).query(stateQuery);
  query.catch(() => {});
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 3000);
  });
  try {
    const state = await Promise.race([query, late]);
    if (!state) return null;
    const steps = state.steps.map((s) =>
      s.status === 'running' || s.status === 'waiting' ? { ...s, status: status, error: reason } : s,
    );
    return { ...state, status, error: reason, steps };
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** One pass: claims a batch of unfinished runs and reconciles each. */
export async function sweepRuns(deps: SweepDeps): Promise<number> {
  const rows = await runStore.claimUnsettledRuns(deps.sql, {
    minAgeSeconds: MIN_AGE_SECONDS,
    recheckSeconds: RECHECK_SECONDS,
    limit: BATCH,
  });
  let changed = 0;
  for (const row of rows) {
    try {
      if ((await reconcileRun(deps, row)) !== 'running') changed++;
    } catch (err) {
      deps.logger.error(
        { runId: row.id, err: err instanceof Error ? err.message : String(err) },
        'run sweep could not check a run',
      );
    }
  }
  return changed;
}

/** Sweeps now and every `everyMs`; returns a stop function. */
export function startRunSweep(deps: Pick<Deps, 'sql' | 'logger' | 'temporal'>, everyMs = 2000): () => void {
  const { temporal } = deps;
  if (!temporal) return () => {};
  let busy = false;
  let passes = 0;
  const pass = async () => {
    if (busy) return;
    busy = true;
    try {
      await sweepRuns({ ...deps, temporal });
      // Expired idempotency keys, about once a minute.
      if (passes++ % Math.max(1, Math.round(60_000 / everyMs)) === 0) await pruneIdempotencyKeys(deps.sql);
    } catch (err) {
      deps.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'run sweep failed');
    } finally {
      busy = false;
    }
  };
  void pass();
  const timer = setInterval(pass, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
