import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Config } from '../config/env.ts';

/**
 * `dist/build-id`, written by `npm run build` beside the compiled code. From the sources this names
 * `core/build-id` (never present), and the id is computed from the sources as the build does.
 */
const BUILT_ID = fileURLToPath(new URL('./build-id', import.meta.url));

let cached: string | null = null;

/** The release's build id: the one the build recorded, else the same hash of the sources. */
export async function releaseBuildId(): Promise<string> {
  if (cached) return cached;
  try {
    cached = readFileSync(BUILT_ID, 'utf8').trim();
  } catch {
    // @ts-expect-error plain JavaScript shared with bin/build.js, without type declarations
    const { sourceBuildId } = (await import('../bin/build-id.js')) as { sourceBuildId(): string };
    cached = sourceBuildId();
  }
  return cached;
}

/** The Worker Deployment Version of this release; null when worker versioning is off. */
export async function deploymentVersion(
  config: Pick<Config, 'workerVersioning'>,
): Promise<WorkerDeploymentVersion | null> {
  const v = config.workerVersioning;
  if (v.mode === 'off') return null;
  return { deploymentName: v.deploymentName, buildId: v.buildId ?? (await releaseBuildId()) };
}
