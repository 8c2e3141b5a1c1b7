// A worker in its own process, so the durability test can SIGKILL it mid-run. Configured from the
// environment like the real `countersign worker`; prints "ready" once it polls.
import { createPoolRegistry } from '../../adapters/index.ts';
import { loadConfig } from '../../config/env.ts';
import { createLogger } from '../../config/runtime.ts';
import { Keyring } from '../../store/crypto.ts';
import { openStore } from '../../store/db.ts';
import { startWorker } from '../../worker/worker.ts';

const config = loadConfig(process.env);
const sql = openStore(config.databaseUrl!, { max: 3 });
const deps = {
  config,
  sql,
  keyring: Keyring.fromBase64(config.encryptionKey!, config.encryptionOldKeys),
  logger: createLogger('warn'),
  pools: createPoolRegistry(),
};
await startWorker(deps, config.temporalAddress!);
process.stdout.write('ready\n');
