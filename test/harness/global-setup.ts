// vitest globalSetup for the integration project: starts the real servers once per run and hands
// their addresses to every test file through provide/inject (see servers.ts).

import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { FAILURE_CONVERTER_PATH } from '../../core/payload-codec.ts';
import { TRACING_WORKFLOW_MODULE, WORKFLOWS_PATH } from '../../worker/worker.ts';
import { startServers } from './start.ts';

/**
 * A missing server is always a failure, never a skip: the error names the package or command that
 * provides it (DESIGN.md, Conventions: "A test that needs a missing server fails").
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [{ servers, stop }, bundle] = await Promise.all([
    startServers(),
    // One workflow bundle per run, shared by every test worker (DESIGN.md Conventions).
    bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      failureConverterPath: FAILURE_CONVERTER_PATH,
      workflowInterceptorModules: [TRACING_WORKFLOW_MODULE],
      logger: quietBundler,
    }),
  ]);
  project.provide('servers', servers);
  project.provide('workflowBundle', { code: bundle.code });
  return stop;
}

const quietBundler = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
