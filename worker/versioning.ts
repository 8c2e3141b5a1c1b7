// Temporal worker versioning (Worker Deployments, https://docs.temporal.io/worker-deployments):
// every worker polls as one Worker Deployment Version (deployment name + the release's build id,
// core/build-id.ts) and every run is PINNED to the version it started on. `serve` pins the runs it
// starts to its own release's version (automation/execution.ts); runs started by a Temporal
// Schedule go to the deployment's current version, which this file moves.
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Logger } from '../core/logger.ts';

export type PromoteMode = 'auto' | 'manual' | 'force';

export interface PromoteOutcome {
  /** Whether `version` is the current version now. */
  current: boolean;
  /** The current version's build id afterwards (null: none). */
  currentBuildId: string | null;
  reason: string;
}

/**
 * Makes `version` the deployment's current one when the mode allows: `force` always, `auto` unless
 * the current version first polled later than this one (an old worker restarted during a rollout
 * must not take the schedules back), `manual` only when no version is current. Waits (up to
 * `waitMs`) for the version to be known to the server: it is registered by its workers' first poll.
 */
export async function promoteVersion(
  service: WorkflowService,
  namespace: string,
  version: WorkerDeploymentVersion,
  opts: { mode: PromoteMode; identity: string; waitMs: number; signal?: AbortSignal },
): Promise<PromoteOutcome> {
  const deadline = Date.now() + opts.waitMs;
  let lastError = 'no worker of this version has polled yet';
  for (;;) {
    if (opts.signal?.aborted)
      return { current: false, currentBuildId: null, reason: 'not promoted: the worker stopped' };
    try {
      const outcome = await promoteOnce(service, namespace, version, opts);
      if (outcome) return outcome;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline)
      return { current: false, currentBuildId: null, reason: `not promoted: ${lastError}` };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One attempt; null: the version is not registered yet (try again). */
async function promoteOnce(
  service: WorkflowService,
  namespace: string,
  version: WorkerDeploymentVersion,
  opts: { mode: PromoteMode; identity: string },
): Promise<PromoteOutcome | null> {
  const { deploymentName, buildId } = version;
  let info: Awaited<ReturnType<WorkflowService['describeWorkerDeployment']>>;
  try {
    info = await service.describeWorkerDeployment({ namespace, deploymentName });
  } catch (err) {
    // NOT_FOUND (5): no worker of the deployment has polled yet.
    if ((err as { code?: number }).code === 5) return null;
    throw err;
  }
  const deployment = info.workerDeploymentInfo;
  const summaries = deployment?.versionSummaries ?? [];
  const own = summaries.find((s) => s.deploymentVersion?.buildId === buildId);
  if (!own) return null;
  const currentBuildId = deployment?.routingConfig?.currentDeploymentVersion?.buildId || null;
  if (currentBuildId === buildId)
    return { current: true, currentBuildId, reason: 'already the current version' };
  if (currentBuildId && opts.mode === 'manual')
    return {
      current: false,
      currentBuildId,
      reason: `WORKER_VERSIONING=manual: ${currentBuildId} stays current until promoted`,
    };
  if (currentBuildId && opts.mode === 'auto') {
    const current = summaries.find((s) => s.deploymentVersion?.buildId === currentBuildId);
    if (current && seconds(current.createTime) > seconds(own.createTime))
      return {
        current: false,
        currentBuildId,
        reason: `${currentBuildId} is current and newer (first polled later)`,
      };
  }
  await service.setWorkerDeploymentCurrentVersion({
    namespace,
    deploymentName,
    buildId,
    identity: opts.identity,
    // Fails (and is retried) when another worker changed the routing since the describe.
    conflictToken: info.conflictToken,
  });
  return { current: true, currentBuildId: buildId, reason: `was ${currentBuildId ?? 'none'}` };
}

function seconds(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return t ? Number(t.seconds ?? 0) + (t.nanos ?? 0) / 1e9 : 0;
}

/** Logs the outcome of a worker's promotion at start (warn when it could not promote). */
export function logPromotion(logger: Logger, version: WorkerDeploymentVersion, o: PromoteOutcome) {
  const fields = {
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    current: o.currentBuildId,
  };
  if (o.current) logger.info({ ...fields, reason: o.reason }, 'worker version is current');
  else if (o.reason.startsWith('not promoted'))
    logger.warn({ ...fields, reason: o.reason }, 'worker version not promoted');
  else logger.info({ ...fields, reason: o.reason }, 'worker version not made current');
}
