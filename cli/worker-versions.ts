// `countersign worker promote` and `countersign worker versions`: the deploy step that moves the
// Worker Deployment's current version (worker/versioning.ts), and what an operator reads before
// removing the workers of an old release (a version is DRAINED once no open run is pinned to it).
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import type { Config } from '../config/env.ts';
import { deploymentVersion } from '../core/build-id.ts';
import { promoteVersion } from '../worker/versioning.ts';
import { UsageError } from './errors.ts';

/** temporal.api.enums.v1.WorkerDeploymentVersionStatus; drained: no open run is pinned to it. */
const STATUS = ['unspecified', 'inactive', 'current', 'ramping', 'draining', 'drained'];

export async function workerVersionCommand(
  config: Config,
  address: string,
  args: string[],
  out: NodeJS.WritableStream,
): Promise<void> {
  const [sub, ...rest] = args;
  const own = await deploymentVersion(config);
  if (!own) throw new UsageError('WORKER_VERSIONING=off: the workers are not versioned');
  const connection = await Connection.connect({ address });
  try {
    const service = connection.workflowService;
    const namespace = config.temporalNamespace;
    if (sub === 'promote') {
      const { values } = parseArgs({
        args: rest,
        options: { 'build-id': { type: 'string' }, 'wait-seconds': { type: 'string', default: '120' } },
      });
      const wait = Number(values['wait-seconds']);
      if (!Number.isInteger(wait) || wait < 0)
        throw new UsageError('--wait-seconds must be a whole number of seconds');
      const version = { ...own, buildId: values['build-id'] ?? own.buildId };
      const o = await promoteVersion(service, namespace, version, {
        mode: 'force',
        identity: 'countersign worker promote',
        waitMs: wait * 1000,
      });
      if (!o.current) throw new Error(`${version.deploymentName} ${version.buildId}: ${o.reason}`);
      out.write(`${version.deploymentName} ${version.buildId} is the current version (${o.reason})\n`);
      return;
    }
    if (sub === 'versions') {
      const res = await service.describeWorkerDeployment({
        namespace,
        deploymentName: own.deploymentName,
      });
      const info = res.workerDeploymentInfo;
      out.write(`deployment ${own.deploymentName} (this release: ${own.buildId})\n`);
      for (const s of info?.versionSummaries ?? []) {
        out.write(`  ${s.deploymentVersion?.buildId}  ${STATUS[Number(s.status ?? 0)] ?? s.status}\n`);
      }
      return;
    }
    throw new UsageError(`worker ${sub}: unknown (worker promote, worker versions)`);
  } finally {
    await connection.close();
  }
}
