// One Temporal Schedule per workflow with a cron_schedule (DESIGN.md), kept in step with the
// definition: created, updated and deleted with it, and deleted when it is archived.
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleSpec } from '@temporalio/client';
import { AppError } from '../core/errors.ts';
import type { TemporalHandle } from '../core/temporal.ts';
import type { WorkflowRow } from '../store/workflows.ts';
import { runSearchAttributes } from '../workflows/search-attributes.ts';
import { temporalCronExpressions } from './cron.ts';

/** The schedule id of a workflow (one per workflow). */
export function scheduleId(workflowId: string): string {
  return `countersign-cron-${workflowId}`;
}

/** Creates, updates or deletes the workflow's schedule to match the row. */
export async function syncSchedule(temporal: TemporalHandle | null, wf: WorkflowRow): Promise<void> {
  const wanted = wf.cron_schedule !== null && wf.archived_at === null;
  if (!temporal) {
    if (!wanted) return;
    throw new AppError(
      503,
      'unavailable',
      'Service unavailable',
      'Temporal is not reachable: cron schedules need it',
    );
  }
  const id = scheduleId(wf.id);
  if (!wanted) {
    try {
      await temporal.client.schedule.getHandle(id).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    return;
  }
  // SPEC.md 2.1: standard cron, evaluated in UTC (the day-field OR is spelled out for Temporal).
  const spec: ScheduleSpec = {
    cronExpressions: temporalCronExpressions(wf.cron_schedule as string),
    timezone: 'UTC',
  };
  try {
    await temporal.client.schedule.create({
      scheduleId: id,
      spec,
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledRunWorkflow', // workflows/scheduled.ts
        args: [{ workflowId: wf.id }],
        taskQueue: temporal.taskQueue,
        workflowId: `cron-${wf.id}`,
        typedSearchAttributes: runSearchAttributes(wf.id, wf.org_id),
        staticSummary: `${wf.name} (cron launcher)`,
      },
      // A firing missed while Temporal was down by more than a minute is skipped, not replayed.
      policies: { catchupWindow: '1 minute' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.client.schedule.getHandle(id).update((prev) => ({ ...prev, spec }));
  }
}
