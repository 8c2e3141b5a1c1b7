import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { type RunningApi, startApi } from '../../api/server.ts';
import { bootstrapAndAnnounce, openMigratedStore, requestNotifier } from '../../cli/boot.ts';
import { loadConfig } from '../../config/env.ts';
import type { Deps } from '../../core/deps.ts';
import { createLogger } from '../../core/logger.ts';
import { dataConverters, serviceCodec } from '../../core/payload-codec.ts';
import { connectTemporal } from '../../core/temporal.ts';
import { createUser } from '../../identity/manage.ts';
import { smtpMailer } from '../../integrations/mail.ts';
import { accessBarrier, startAccessCache } from '../../store/access-cache.ts';
import { generateKey, Keyring } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import type { Role } from '../../store/users.ts';
import { AgentHub } from '../../tunnels/hub.ts';
import { createAgentAwarePools } from '../../tunnels/pools.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore } from '../harness/store.ts';

/** A real service on a free port with its own fresh store, as a test file sees it. */
export interface TestService {
  url: string;
  deps: Deps;
  /** The service's own store, for tests that change it from outside as psql or the CLI would. */
  storeUrl: string;
  /**
   * After a test changed access rows directly (not through a request): waits until the service
   * has heard of every change committed so far, as a request that changes access does
   * (store/access-cache.ts rule 3).
   */
  settled(): Promise<void>;
  api: RunningApi;
  /** The bootstrap credentials (known, since the test set them through the environment). */
  apiKey: string;
  admin: { email: string; password: string };
  /** Every log line the service wrote, for the no-secrets checks. */
  logs: string[];
  /** fetch against the service with a path. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  /** Connect to the harness Temporal server (default false), or to this one. */
  temporal?: boolean | { address: string; namespace: string };
  env?: Record<string, string>;
  /** LC_CTYPE of the service's store database (default: the harness cluster's C). */
  storeCtype?: string;
  /** Heartbeat interval of the agent hub (default 15 s; agent tests shorten it). */
  agentHeartbeatMs?: number;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const store = await createTestStore(undefined, options.storeCtype ? { ctype: options.storeCtype } : {});
  const apiKey = mintSecret('cskey', newId('key')).secret;
  const admin = { email: 'root@example.test', password: 'correct horse battery staple' };
  const temporal = typeof options.temporal === 'object' ? options.temporal : servers().temporal;
  // A known free port first, so BASE_URL (issuer, problem types, links) is the real address.
  const port = await freePort();
  const taskQueue = `test-${newId('run').slice(-10).toLowerCase()}`;
  const config = loadConfig({
    DATABASE_URL: store.url,
    PORT: String(port),
    COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
    COUNTERSIGN_ADMIN_EMAIL: admin.email,
    COUNTERSIGN_ADMIN_PASSWORD: admin.password,
    COUNTERSIGN_API_KEY: apiKey,
    LOG_LEVEL: 'info',
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A worker deployment of its own: Temporal keeps at most 100 task queues per version, and the
    // test files' services would all share one version of one deployment.
    TEMPORAL_DEPLOYMENT_NAME: taskQueue,
    // Every test client registers from 127.0.0.1; test/security/limits.test.ts checks the real default.
    OAUTH_REGISTRATIONS_PER_ADDRESS: '100',
    // The test peers (chat, tracker, HTTP receivers) listen on loopback, which the outbound
    // network policy refuses by default; test/security/outbound.test.ts checks the default.
    COUNTERSIGN_OUTBOUND_ALLOW: '127.0.0.1',
    ...(options.env ?? {}),
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const sql = await openMigratedStore(store.url, { max: 5 });
  const logger = createLogger('info', sink);
  const agents = new AgentHub({ sql, logger }, options.agentHeartbeatMs);
  const keyring = Keyring.fromBase64(config.encryptionKey!, config.encryptionOldKeys);
  // As in production (cli/boot.ts): access decisions cached, emptied by the store's notifications.
  const accessCache = await startAccessCache(sql, store.url, logger);
  const deps: Deps = {
    config,
    sql,
    keyring,
    logger,
    temporal: options.temporal
      ? await connectTemporal(temporal.address, config, dataConverters(serviceCodec({ sql, keyring })).client)
      : null,
    pools: createAgentAwarePools(agents),
    agents,
    notify: requestNotifier(config, sql, logger),
    ...(config.smtp ? { mailer: smtpMailer(config.smtp) } : {}),
    accessCache,
  };
  await bootstrapAndAnnounce(deps, sink);
  const api = await startApi(deps);
  return {
    url: api.url,
    storeUrl: store.url,
    settled: () => accessBarrier(sql),
    deps,
    api,
    apiKey,
    admin,
    logs,
    fetch: (path, init) => fetch(api.url + path, init),
    async stop() {
      await api.close();
      await agents.close();
      await deps.pools.closeAll();
      await deps.temporal?.connection.close();
      await accessCache.close();
      await sql.end({ timeout: 5 });
      await store.drop();
    },
  };
}

/** A person with a password in the bootstrap admin's organization, made in the store; their id. */
export async function addPerson(
  svc: TestService,
  person: { email: string; password: string; role?: Role },
): Promise<string> {
  const [admin] = await svc.deps.sql<{ org_id: string }[]>`
    select org_id from users where lower(email) = ${svc.admin.email}`;
  const user = await createUser(svc.deps.sql, {
    orgId: admin!.org_id,
    email: person.email,
    role: person.role ?? 'member',
    password: person.password,
  });
  return user.id;
}

// Re-exported: most test files import their helpers from here.
export { signIn } from './sign-in.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
