// Starts `worker-process.ts` as a separate process for the service's task queue, so a test can
// SIGKILL a worker mid-run (durability.test.ts, retry-after-crash.test.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { servers } from '../harness/servers.ts';
import type { WorkflowEnv } from './setup.ts';

const SCRIPT = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** Resolves once the worker polls; the child is added to `children` for the test's cleanup. */
export function startWorkerProcess(
  env: WorkflowEnv,
  children: ChildProcess[],
  extraEnv: Record<string, string> = {},
): Promise<ChildProcess> {
  const c = env.svc.deps.config;
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: {
      ...process.env,
      DATABASE_URL: c.databaseUrl!,
      COUNTERSIGN_ENCRYPTION_KEY: c.encryptionKey!,
      TEMPORAL_ADDRESS: servers().temporal.address,
      TEMPORAL_NAMESPACE: c.temporalNamespace,
      TEMPORAL_TASK_QUEUE: c.temporalTaskQueue,
      // The API pins its runs to its deployment version: the child polls as the same one.
      TEMPORAL_DEPLOYMENT_NAME: c.workerVersioning.deploymentName,
      COUNTERSIGN_BUILD_ID: env.svc.deps.temporal!.version!.buildId,
      CHAT_API_URL: c.chatApiUrl,
      CHAT_BOT_TOKEN: c.chatBotToken ?? '',
      BASE_URL: c.baseUrl,
      // The peers listen on loopback (test/helpers/service.ts allows it the same way).
      COUNTERSIGN_OUTBOUND_ALLOW: '127.0.0.1',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker process exited with ${code}`)));
  });
}

/** SIGKILL: no graceful shutdown, in-flight activities are simply lost. Resolves once it is gone. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}
