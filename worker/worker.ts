import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { Deps } from '../core/deps.ts';
import { installTemporalLogger } from './temporal-logger.ts';

/** Path of the workflow module the worker bundles (STYLE.md: workflowsPath from import.meta.url). */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error). */
  done: Promise<void>;
  /** Graceful: stops polling, lets running activities finish, then resolves `done`. */
  shutdown(): Promise<void>;
}

/** Starts a worker on the configured task queue with every workflow and activity that exists. */
export async function startWorker(
  deps: Pick<Deps, 'sql' | 'keyring' | 'logger' | 'config' | 'pools'>,
  address: string,
  options: { workflowBundle?: { code: string } } = {},
): Promise<RunningWorker> {
  installTemporalLogger(deps.logger);
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporalNamespace,
    taskQueue: deps.config.temporalTaskQueue,
    // Tests pass the bundle their global setup built once; processes bundle at start.
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(deps),
    shutdownGraceTime: '30 seconds',
  });
  const done = worker.run().finally(() => connection.close());
  deps.logger.info(
    { taskQueue: deps.config.temporalTaskQueue, namespace: deps.config.temporalNamespace },
    'worker started',
  );
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
