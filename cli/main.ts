import { parseArgs } from 'node:util';
import { AGENT_USAGE, runAgent } from '../agent/main.ts';
import { startApi } from '../api/server.ts';
import { type Config, ConfigError, loadConfig } from '../config/env.ts';
import { listAgents, registerAgent, revokeAgent } from '../governance/agents/agents.ts';
import { verifyAllChains } from '../governance/audit.ts';
import { startMaintenance } from '../governance/maintenance.ts';
import { createApiKey, createPersonalToken, createUser } from '../identity/manage.ts';
import { newId } from '../store/ids.ts';
import { mintSecret } from '../store/secrets.ts';
import { findUserByEmail, firstOrganization, ROLES, type Role } from '../store/users.ts';
import { startWorker } from '../worker/worker.ts';
import { bootstrapAndAnnounce, buildDeps, openMigratedStore } from './boot.ts';
import { startDev } from './dev.ts';

const USAGE = `countersign <command> [options]

  serve [--with-worker]      run the API (needs DATABASE_URL, TEMPORAL_ADDRESS, COUNTERSIGN_ENCRYPTION_KEY);
                             --with-worker also runs the Temporal worker in the same process
  worker                     run the Temporal worker
  dev                        API + worker in one process with an embedded store and Temporal
  migrate                    apply pending store migrations
  create-user --email E [--role super_admin|admin|member] [--password P] [--name N]
  create-api-key [--name N]  prints a new organization API key once
  create-token --email E [--name N] [--expires-days D]
                             prints a personal access token for the user once
  generate-api-key           prints a key in the shape COUNTERSIGN_API_KEY expects (touches nothing)
  verify-audit               checks every organization's audit hash chain; exits 1 if one is broken
  agent register --name N    registers an agent and prints its id and token once (needs DATABASE_URL)
  agent revoke --id agt_…    revokes an agent's token; agent list: the agents and their status
  ${AGENT_USAGE.replace(/\n/g, '\n  ')}
`;

type Command = (config: Config, args: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  async serve(config, args) {
    const { values } = parseArgs({ args, options: { 'with-worker': { type: 'boolean', default: false } } });
    const deps = await buildDeps(config, {
      storeUrl: requireStore(config),
      temporalAddress: requireTemporal(config),
      dev: false,
    });
    await bootstrapAndAnnounce(deps);
    // --with-worker: one process runs both, so workflow query steps reach databases behind an
    // agent whose tunnel this process holds (agent/README.md "Replicas").
    const worker = values['with-worker'] ? await startWorker(deps, requireTemporal(config)) : null;
    const api = await startApi(deps);
    const stopMaintenance = startMaintenance(deps);
    deps.logger.info({ url: api.url, baseUrl: config.baseUrl, worker: worker !== null }, 'api listening');
    await untilSignal();
    stopMaintenance();
    await api.close();
    await worker?.shutdown();
    await deps.pools.closeAll();
    await deps.sql.end({ timeout: 5 });
    await deps.temporal?.connection.close();
  },
  async worker(config) {
    const address = requireTemporal(config);
    const deps = await buildDeps(config, {
      storeUrl: requireStore(config),
      temporalAddress: null,
      dev: false,
    });
    const worker = await startWorker(deps, address);
    await Promise.race([untilSignal(), worker.done]);
    // SIGTERM: stop polling, let running activities finish (graceful shutdown).
    await worker.shutdown();
    await deps.sql.end({ timeout: 5 });
  },
  async dev(config) {
    const dev = await startDev(config);
    await untilSignal();
    process.stdout.write('  stopping…\n');
    await dev.stop();
  },
  async migrate(config) {
    const sql = await openMigratedStore(requireStore(config));
    const [row] = await sql<{ v: number }[]>`select max(version)::int as v from schema_migrations`;
    process.stdout.write(`store at migration ${row?.v ?? 0}\n`);
    await sql.end();
  },
  async 'create-user'(config, args) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        role: { type: 'string', default: 'member' },
        password: { type: 'string' },
        name: { type: 'string' },
      },
    });
    if (!values.email) throw new UsageError('--email is required');
    if (!ROLES.includes(values.role as Role))
      throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    await withStore(config, async (sql) => {
      const org = await requireOrg(sql);
      const password = values.password ?? mintSecret('pw', newId('usr')).secret.slice(-20);
      const user = await createUser(sql, {
        orgId: org.id,
        email: values.email!,
        name: values.name ?? '',
        role: values.role as Role,
        password,
      });
      process.stdout.write(
        `created ${user.id} ${user.email} (${user.role})\n${values.password ? '' : `password: ${password}\n`}`,
      );
    });
  },
  async 'create-api-key'(config, args) {
    const { values } = parseArgs({ args, options: { name: { type: 'string', default: 'cli' } } });
    await withStore(config, async (sql) => {
      const org = await requireOrg(sql);
      const { key, secret } = await createApiKey(sql, { orgId: org.id, name: values.name!, createdBy: null });
      process.stdout.write(`created ${key.id}\n${secret}\n`);
    });
  },
  async 'create-token'(config, args) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        name: { type: 'string', default: 'cli' },
        'expires-days': { type: 'string' },
      },
    });
    if (!values.email) throw new UsageError('--email is required');
    const days = values['expires-days'] ? Number(values['expires-days']) : null;
    if (days !== null && !(Number.isInteger(days) && days > 0))
      throw new UsageError('--expires-days must be a positive whole number');
    await withStore(config, async (sql) => {
      const user = await findUserByEmail(sql, values.email!);
      if (!user) throw new UsageError(`no user with email ${values.email}`);
      const expiresAt = days ? new Date(Date.now() + days * 86_400_000) : null;
      const { token, secret } = await createPersonalToken(sql, {
        userId: user.id,
        name: values.name!,
        expiresAt,
      });
      process.stdout.write(`created ${token.id} for ${user.email}\n${secret}\n`);
    });
  },
  async 'verify-audit'(config) {
    await withStore(config, async (sql) => {
      const reports = await verifyAllChains(sql);
      for (const r of reports) {
        process.stdout.write(
          r.ok
            ? `${r.orgId}: ok, ${r.entries} entries\n`
            : `${r.orgId}: BROKEN at seq ${r.broken?.seq} (${r.broken?.id ?? 'no entry'}): ${r.broken?.reason}\n`,
        );
      }
      if (reports.some((r) => !r.ok)) process.exitCode = 1;
    });
  },
  async agent(config, args) {
    const [sub, ...rest] = args;
    if (sub === 'register') {
      const { values } = parseArgs({ args: rest, options: { name: { type: 'string' } } });
      if (!values.name) throw new UsageError('--name is required');
      await withStore(config, async (sql) => {
        const org = await requireOrg(sql);
        const { agent, token } = await registerAgent(
          { sql },
          { orgId: org.id, name: values.name!, createdBy: null },
        );
        process.stdout.write(`created ${agent.id} (${agent.name})\n${token}\n`);
      });
      return;
    }
    if (sub === 'revoke') {
      const { values } = parseArgs({ args: rest, options: { id: { type: 'string' } } });
      if (!values.id) throw new UsageError('--id is required');
      await withStore(config, async (sql) => {
        await revokeAgent({ sql }, (await requireOrg(sql)).id, values.id!).catch(() => {
          throw new UsageError(`no live agent ${values.id}`);
        });
        process.stdout.write(`revoked ${values.id}\n`);
      });
      return;
    }
    if (sub === 'list') {
      await withStore(config, async (sql) => {
        for (const a of await listAgents({ sql }, (await requireOrg(sql)).id))
          process.stdout.write(
            `${a.id} ${a.name} ${a.revoked ? 'revoked' : a.connected ? 'connected' : 'not connected'} last seen ${a.last_seen_at ?? 'never'} version ${a.version ?? '-'}\n`,
          );
      });
      return;
    }
    throw new UsageError(`unknown agent command ${sub}`);
  },
  async 'generate-api-key'() {
    process.stdout.write(`${mintSecret('cskey', newId('key')).secret}\n`);
  },
};

class UsageError extends Error {}

function requireStore(config: Config): string {
  if (!config.databaseUrl)
    throw new UsageError(
      'DATABASE_URL is required (with `npm run dev` running, use the store URL it prints)',
    );
  return config.databaseUrl;
}

function requireTemporal(config: Config): string {
  if (!config.temporalAddress)
    throw new UsageError('TEMPORAL_ADDRESS is required (host:port of the Temporal frontend)');
  return config.temporalAddress;
}

async function withStore(
  config: Config,
  fn: (sql: Awaited<ReturnType<typeof openMigratedStore>>) => Promise<void>,
) {
  const sql = await openMigratedStore(requireStore(config), { max: 1 });
  try {
    await fn(sql);
  } finally {
    await sql.end();
  }
}

async function requireOrg(sql: Awaited<ReturnType<typeof openMigratedStore>>) {
  const org = await firstOrganization(sql);
  if (!org) throw new UsageError('the store has no organization yet: start the service once (serve or dev)');
  return org;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // The agent process runs inside the customer's network with none of the service's settings.
  if (name === 'agent' && !['register', 'revoke', 'list'].includes(rest[0] ?? '')) return runAgent(rest);
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(USAGE);
    return name && name !== 'help' && name !== '--help' ? 2 : 0;
  }
  try {
    await command(loadConfig(), rest);
    // A command that found a problem (verify-audit) says so through process.exitCode.
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`countersign ${name}: ${err.message}\n`);
      return 2;
    }
    // A start-up failure (store or Temporal unreachable) is a one-line reason, not a stack trace.
    // Driver messages name host and port, never the password in the URL.
    const reason = err instanceof Error ? err.message : String(err);
    process.stderr.write(`countersign ${name}: cannot continue: ${reason}\n`);
    if (process.env.LOG_LEVEL === 'debug' && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}
