import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { deploymentVersion } from '../core/build-id.ts';
import type { Deps } from '../core/deps.ts';
import { dataConverters, serviceCodec } from '../core/payload-codec.ts';
import { temporalWorkerTracing } from '../core/tracing.ts';
import { installTemporalLogger } from './temporal-logger.ts';
import { logPromotion, type PromoteOutcome, promoteVersion } from './versioning.ts';

/** Path of the workflow module the worker bundles (STYLE.md: workflowsPath from import.meta.url). */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The workflow interceptors every bundle carries (OpenTelemetry's, for traced runs only). */
export const TRACING_WORKFLOW_MODULE = fileURLToPath(new URL('../workflows/tracing.ts', import.meta.url));

/**
 * The workflow bundle `npm run build` writes beside the compiled code (`dist/workflow-bundle.js`,
 * bundled with Temporal's bundleWorkflowCode at build time). From the compiled code this names
 * that file; from the sources it names `worker/workflow-bundle.js`, which never exists, so a worker
 * run from sources bundles `WORKFLOWS_PATH` at start instead.
 */
export const BUILT_WORKFLOW_BUNDLE = fileURLToPath(new URL('./workflow-bundle.js', import.meta.url));

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error). */
  done: Promise<void>;
  /** Polling, and Temporal answers (throws when it does not). */
  ready(): Promise<boolean>;
  /** Graceful: stops polling, lets running activities finish, then resolves `done`. */
  shutdown(): Promise<void>;
  /** Whether this worker made its version the current one at start (null: versioning off). */
  promotion: Promise<PromoteOutcome | null>;
}

/** How long a starting worker tries to promote its version (its first poll registers it). */
const PROMOTE_WAIT_MS = 60_000;

/** Starts a worker on the configured task queue with every workflow and activity that exists. */
export async function startWorker(
  deps: Pick<Deps, 'sql' | 'keyring' | 'logger' | 'config' | 'pools'>,
  address: string,
  options: {
    workflowBundle?: { code: string } | { codePath: string };
    metricsAddress?: string;
    /** The worker's identity in Temporal's history (default: the SDK's pid@host). */
    identity?: string;
  } = {},
): Promise<RunningWorker> {
  installTemporalLogger(
    deps.logger,
    options.metricsAddress ? { metricsAddress: options.metricsAddress } : {},
  );
  const workflowBundle =
    options.workflowBundle ??
    (existsSync(BUILT_WORKFLOW_BUNDLE) ? { codePath: BUILT_WORKFLOW_BUNDLE } : undefined);
  const version = await deploymentVersion(deps.config);
  const connection = await NativeConnection.connect({ address });
  const tracing = temporalWorkerTracing();
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporalNamespace,
    taskQueue: deps.config.temporalTaskQueue,
    // Tests pass the bundle their global setup built once; the compiled processes load the one
    // built with them; processes run from sources bundle at start.
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(deps),
    interceptors: {
      // A bundle built beforehand carries the module already (bin/build.js, the tests' setup).
      ...(workflowBundle ? {} : { workflowModules: [TRACING_WORKFLOW_MODULE] }),
      ...(tracing ? { activity: tracing.activity } : {}),
    },
    // A traced run's workflow spans leave through this sink; with tracing off here they go nowhere.
    sinks: tracing ? tracing.sinks : { exporter: { export: { fn() {} } } },
    // Every payload and failure message leaves encrypted; the codec runs in this thread, outside
    // the workflow sandbox. A bundle built elsewhere names the same failure converter.
    dataConverter: dataConverters(serviceCodec(deps)).worker,
    shutdownGraceTime: '30 seconds',
    ...(options.identity ? { identity: options.identity } : {}),
    ...pinnedTo(version),
  });
  const stopPromoting = new AbortController();
  const done = worker
    .run()
    .finally(() => stopPromoting.abort())
    .finally(() => connection.close());
  const promotion = version
    ? promoteVersion(connection.workflowService, deps.config.temporalNamespace, version, {
        mode: deps.config.workerVersioning.mode === 'manual' ? 'manual' : 'auto',
        identity: worker.options.identity,
        waitMs: PROMOTE_WAIT_MS,
        signal: stopPromoting.signal,
      }).then((outcome) => {
        if (!stopPromoting.signal.aborted) logPromotion(deps.logger, version, outcome);
        return outcome;
      })
    : Promise.resolve(null);
  deps.logger.info(
    {
      taskQueue: deps.config.temporalTaskQueue,
      namespace: deps.config.temporalNamespace,
      deploymentName: version?.deploymentName ?? null,
      buildId: version?.buildId ?? null,
      workflows: workflowBundle
        ? 'codePath' in workflowBundle
          ? workflowBundle.codePath
          : 'bundle'
        : 'sources',
    },
    'worker started',
  );
  return {
    worker,
    done,
    async ready() {
      if (worker.getState() !== 'RUNNING') return false;
      await connection.workflowService.getSystemInfo({});
      return true;
    },
    async shutdown() {
      stopPromoting.abort();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
      await promotion;
    },
    promotion,
  };
}

/**
 * The worker options that poll as `version` (none when versioning is off). PINNED: a run stays
 * on the version it started on, to its end, so no history is ever replayed by other workflow code
 * and no activity meets a snapshot of another release. Upgrading running workflows in place
 * (AUTO_UPGRADE) would need every change guarded by patched().
 */
export function pinnedTo(version: Awaited<ReturnType<typeof deploymentVersion>>) {
  return version
    ? {
        workerDeploymentOptions: {
          version,
          useWorkerVersioning: true as const,
          defaultVersioningBehavior: 'PINNED' as const,
        },
      }
    : {};
}
