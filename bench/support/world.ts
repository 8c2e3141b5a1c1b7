// What the workflow benches share: the servers with a service built on them as
// `countersign serve --with-worker` builds it, an organization with the bench's PostgreSQL
// registered as a database, and the principal its runs start as (an automation's key: its
// service-account owner).
import * as v from 'valibot';
import { buildDeps } from '../../cli/boot.ts';
import { type Config, loadConfig } from '../../config/env.ts';
import type { Deps } from '../../core/deps.ts';
import type { QueryActor } from '../../governance/types.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import { CreateDatabase } from '../../registry/database-input.ts';
import { createDatabase, type DatabaseDeps, type DatabaseWithCredentials } from '../../registry/databases.ts';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { insertOrganization, insertServiceAccount } from '../../store/users.ts';
import type { SqlServer } from '../../test/harness/servers.ts';
import { type StartedServers, startServers } from '../../test/harness/start.ts';
import { createTestStore } from '../../test/harness/store.ts';
import { startReceiver } from '../../test/peers/receiver.ts';

export interface BenchService {
  servers: StartedServers['servers'];
  config: Config;
  deps: Deps;
  /** An HTTP peer on loopback for API steps (allowed by the outbound policy here). */
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  taskQueue: string;
  stop(): Promise<void>;
}

/** Starts the servers, a fresh store and the service's dependencies on them. */
export async function startBenchService(): Promise<BenchService> {
  const started = await startServers({ log: () => {} });
  const { postgres: pg, temporal: t } = started.servers;
  const store = await createTestStore(pg);
  const receiver = await startReceiver();
  const taskQueue = `bench-${newId('run').slice(-10).toLowerCase()}`;
  const config = loadConfig({
    DATABASE_URL: store.url,
    COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
    TEMPORAL_NAMESPACE: t.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'silent',
    // The receiver listens on loopback, which the outbound network policy refuses by default.
    COUNTERSIGN_OUTBOUND_ALLOW: '127.0.0.1',
  });
  const deps = await buildDeps(config, {
    storeUrl: store.url,
    storeMax: 10,
    temporalAddress: t.address,
    dev: false,
  });
  return {
    servers: started.servers,
    config,
    deps,
    receiver,
    taskQueue,
    async stop() {
      await deps.temporal?.connection.close();
      await deps.pools.closeAll();
      await deps.sql.end({ timeout: 5 });
      await receiver.close();
      await store.drop();
      await started.stop();
    },
  };
}

/** Who the benchmarks' own setup acts as in the audit chain (no person sets a bench up). */
export const BENCH_ACTOR: QueryActor = { kind: 'api_key', apiKeyId: 'key_bench' };

export interface BenchOrg {
  orgId: string;
  /** The default credential of the registered database (the server's superuser, no reviews). */
  credentialId: string;
  /** Starts runs as an automation's key does: as its (service account) owner. */
  principal: UserPrincipal;
}

/**
 * Registers the bench's PostgreSQL in `orgId` as the benches' own setup does: its superuser as the
 * default credential, without reviews. `ai` opens it and the credential to AI clients (the MCP
 * bench); `restricted` makes it reachable through a grant only (the slow path of access).
 */
export function registerBenchPostgres(
  deps: DatabaseDeps,
  orgId: string,
  pg: SqlServer,
  options: { ai?: boolean; restricted?: boolean } = {},
): Promise<DatabaseWithCredentials> {
  return createDatabase(
    deps,
    { orgId, actor: BENCH_ACTOR, origin: 'user' },
    v.parse(CreateDatabase, {
      name: 'bench',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      ...(options.ai ? { ai_enabled: true } : {}),
      ...(options.restricted ? { restrict_access: true } : {}),
      credentials: [
        {
          username: pg.user,
          password: pg.password,
          reviews_required: 0,
          default_credential: true,
          ...(options.ai ? { ai_allowed: true } : {}),
        },
      ],
    }),
  );
}

/** A fresh organization with `pg` registered and a service account to start runs as. */
export async function benchOrg(deps: Deps, pg: SqlServer): Promise<BenchOrg> {
  const org = await insertOrganization(deps.sql, { id: newId('org'), name: 'bench' });
  const { credentials } = await registerBenchPostgres(deps, org.id, pg);
  const svc = await insertServiceAccount(deps.sql, {
    id: newId('usr'),
    orgId: org.id,
    name: 'bench',
    role: 'admin',
  });
  return {
    orgId: org.id,
    credentialId: credentials[0]!.id,
    principal: {
      kind: 'user',
      orgId: org.id,
      userId: svc.id,
      email: svc.email,
      role: svc.role,
      via: 'api_key',
      credentialId: 'key_bench',
      serviceAccount: true,
    },
  };
}
