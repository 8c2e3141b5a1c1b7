// A worker in its own process, so the durability test can SIGKILL it mid-run. Configured from the
// environment and built like the real `countersign worker`; prints "ready" once it polls.
import { buildDeps } from '../../cli/boot.ts';
import { loadConfig } from '../../config/env.ts';
import { startWorker } from '../../worker/worker.ts';

const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
const deps = await buildDeps(config, {
  storeUrl: config.databaseUrl!,
  storeMax: 3,
  temporalAddress: null,
  dev: false,
});
await startWorker(deps, config.temporalAddress!);
process.stdout.write('ready\n');
