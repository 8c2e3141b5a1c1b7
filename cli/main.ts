// Each command imports what it runs when it runs (dynamic imports): `serve` never loads the
// Temporal worker (unless --with-worker) nor dev mode's embedded store, `worker` never loads the
// API, and `agent` loads neither. `npm run bench -- processes` measures the result.
import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config/env.ts';
import { keepServingOnSocketErrors } from '../core/last-resort.ts';
import { startTracing, stopTracing } from '../core/tracing.ts';
import { UsageError } from './errors.ts';

const usage = (agentUsage: string) => `countersign <command> [options]

  serve [--with-worker]      run the API (needs DATABASE_URL, TEMPORAL_ADDRESS, COUNTERSIGN_ENCRYPTION_KEY);
                             --with-worker also runs the Temporal worker in the same process
  worker                     run the Temporal worker
  worker promote [--build-id ID] [--wait-seconds N]
                             makes this release's (or ID's) worker version the current one,
                             waiting up to N s (default 120) for its workers to poll
  worker versions            the worker deployment's versions (current, draining, drained)
  dev                        API + worker in one process with an embedded store and Temporal
  migrate                    apply pending store migrations
  create-user --email E [--role super_admin|admin|member] [--password P] [--name N]
  create-api-key (--owner E | --service-account member|admin) [--name N]
                             prints a new API key once: acting as the person E, or as a new
                             service account with that role
  create-token --email E [--name N] [--expires-days D]
                             prints a personal access token for the user once
  generate-api-key           prints a key in the shape COUNTERSIGN_API_KEY expects (touches nothing)
  temporal-key-usage         how many open runs still hold payloads under an old encryption key
  verify-audit               checks every organization's audit hash chain; exits 1 if one is broken
  agent register --name N    registers an agent and prints its id and token once (needs DATABASE_URL)
  agent revoke --id agt_…    revokes an agent's token; agent list: the agents and their status
  ${agentUsage.replace(/\n/g, '\n  ')}
`;

type Command = (config: Config, args: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  async serve(config, args) {
    const { values } = parseArgs({ args, options: { 'with-worker': { type: 'boolean', default: false } } });
    const [{ bootstrapAndAnnounce, buildDeps }, { startApi }, { startMaintenance }, { startRunSweep }] =
      await Promise.all([
        import('./boot.ts'),
        import('../api/server.ts'),
        import('../governance/maintenance.ts'),
        import('../automation/run-sweep.ts'),
      ]);
    // Before the Temporal client exists: its interceptors carry the trace context to the runs.
    await startTracing('serve');
    const deps = await buildDeps(config, {
      storeUrl: requireStore(config),
      temporalAddress: requireTemporal(config),
      dev: false,
    });
    keepServingOnSocketErrors(deps.logger);
    await bootstrapAndAnnounce(deps);
    // --with-worker: one process runs both, so workflow query steps reach databases behind an
    // agent whose tunnel this process holds (agent/README.md "Replicas").
    const worker = values['with-worker']
      ? await (await import('../worker/worker.ts')).startWorker(deps, requireTemporal(config))
      : null;
    const api = await startApi(deps);
    const stopMaintenance = startMaintenance(deps);
    // Runs left unstarted by a stopped replica, or ended outside Countersign, are settled here.
    const stopRunSweep = startRunSweep(deps);
    // Prepared transactions that dead workflow write steps left on targets are settled here.
    const stopPreparedSweep = (await import('../automation/prepared-sweep.ts')).startPreparedSweep(deps);
    deps.logger.info({ url: api.url, baseUrl: config.baseUrl, worker: worker !== null }, 'api listening');
    await untilSignal();
    await api.drain({
      delayMs: config.shutdown.delaySeconds * 1000,
      graceMs: config.shutdown.graceSeconds * 1000,
    });
    stopPreparedSweep();
    stopRunSweep();
    stopMaintenance();
    await worker?.shutdown();
    await deps.pools.closeAll();
    await deps.accessCache?.close();
    await deps.sql.end({ timeout: 5 });
    await deps.temporal?.connection.close();
    await stopTracing();
  },
  async worker(config, args) {
    const address = requireTemporal(config);
    if (args.length > 0) {
      const { workerVersionCommand } = await import('./worker-versions.ts');
      return workerVersionCommand(config, address, args, process.stdout);
    }
    const [{ buildDeps }, { startWorker }] = await Promise.all([
      import('./boot.ts'),
      import('../worker/worker.ts'),
    ]);
    await startTracing('worker');
    const deps = await buildDeps(config, {
      storeUrl: requireStore(config),
      temporalAddress: null,
      dev: false,
    });
    keepServingOnSocketErrors(deps.logger);
    // A worker started before any API process still finds the search attributes its
    // runs carry (or stops naming the command to create them).
    const [{ connectTemporal }, { ensureSearchAttributes }] = await Promise.all([
      import('../core/temporal.ts'),
      import('./temporal-setup.ts'),
    ]);
    const setup = await connectTemporal(address, config);
    try {
      await ensureSearchAttributes(setup, deps.logger);
    } finally {
      await setup.connection.close();
    }
    const http = config.workerHttpPort === null ? null : await import('../worker/http.ts');
    const metricsAddress = http ? await http.loopbackMetricsAddress() : undefined;
    const worker = await startWorker(deps, address, metricsAddress ? { metricsAddress } : {});
    const endpoint =
      http && metricsAddress
        ? await http.startWorkerHttp({
            host: config.host,
            port: config.workerHttpPort!,
            logger: deps.logger,
            sdkMetricsAddress: metricsAddress,
            ready: () => worker.ready(),
          })
        : null;
    await Promise.race([untilSignal(), worker.done]);
    // SIGTERM: stop polling, let running activities finish (graceful shutdown).
    await worker.shutdown();
    await endpoint?.close();
    await deps.accessCache?.close();
    await deps.sql.end({ timeout: 5 });
    await stopTracing();
  },
  async dev(config) {
    const { startDev } = await import('./dev.ts');
    const dev = await startDev(config);
    // A worker that cannot start ends dev mode (with its reason): runs would wait for it forever.
    const workerFailed = dev.workerReady.then(() => new Promise<never>(() => {}));
    try {
      await Promise.race([untilSignal(), workerFailed]);
    } finally {
      process.stdout.write('  stopping…\n');
      await dev.stop();
    }
  },
  async 'temporal-key-usage'(config) {
    const address = requireTemporal(config);
    const [{ Client, Connection }, { loadKeyring }, { payloadKeyUsage }] = await Promise.all([
      import('@temporalio/client'),
      import('../store/keyring-file.ts'),
      import('../core/payload-key-usage.ts'),
    ]);
    const keyring = await loadKeyring(config, config.databaseUrl === null);
    // No data converter: only the payloads' labels are read, never their contents.
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection, namespace: config.temporalNamespace });
      const u = await payloadKeyUsage(client, keyring);
      const lines = [
        `current key: ${u.currentKeyId}`,
        `open runs: ${u.openRuns}`,
        `open runs with payloads under an old key: ${u.runsOnOldKeys}`,
        `open runs with payloads written before encryption: ${u.runsWithPlaintext}`,
        ...Object.entries(u.payloadsByKey).map(([id, n]) => `  ${id}: ${n} payload(s)`),
        ...(u.unknownKeyIds.length
          ? [`keys not configured (cannot decode): ${u.unknownKeyIds.join(', ')}`]
          : []),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      if (u.unknownKeyIds.length) process.exitCode = 1;
    } finally {
      await connection.close();
    }
  },
  async 'generate-api-key'() {
    const [{ mintSecret }, { newId }] = await Promise.all([
      import('../store/secrets.ts'),
      import('../store/ids.ts'),
    ]);
    process.stdout.write(`${mintSecret('cskey', newId('key')).secret}\n`);
  },
};

function requireStore(config: Config): string {
  if (!config.databaseUrl)
    throw new UsageError(
      'DATABASE_URL is required: the postgres:// URL of the service store (npm run dev needs none)',
    );
  return config.databaseUrl;
}

function requireTemporal(config: Config): string {
  if (!config.temporalAddress)
    throw new UsageError('TEMPORAL_ADDRESS is required (host:port of the Temporal frontend)');
  return config.temporalAddress;
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
  if (name === 'agent' && !['register', 'revoke', 'list'].includes(rest[0] ?? ''))
    return (await import('../agent/main.ts')).runAgent(rest);
  const command = name && Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command && name && Object.hasOwn((await import('./admin-commands.ts')).ADMIN_COMMANDS, name))
    return runAdmin(name, rest);
  if (!command) {
    process.stderr.write(usage((await import('../agent/main.ts')).AGENT_USAGE));
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

/**
 * An admin command: against DATABASE_URL when it is set; otherwise against dev mode's embedded
 * store — through the running dev process when there is one (its PGlite serves one connection),
 * else by opening the store in the data folder for the length of the command.
 */
async function runAdmin(name: string, args: string[]): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`countersign ${name}: ${(err as Error).message}\n`);
    return 2;
  }
  const [{ runAdminCommand }, { openMigratedStore }] = await Promise.all([
    import('./admin-commands.ts'),
    import('./boot.ts'),
  ]);
  if (!config.databaseUrl) {
    const { sendLocalCommand } = await import('./local-commands.ts');
    const reply = await sendLocalCommand(config.dataDir, name, args);
    if (reply) {
      process.stdout.write(reply.out);
      process.stderr.write(reply.err);
      return reply.code;
    }
  }
  const storeUrl = config.databaseUrl;
  return runAdminCommand(
    name,
    args,
    config,
    {
      out: process.stdout,
      async withStore(fn) {
        const embedded = storeUrl
          ? null
          : await (await import('./embedded-store.ts')).startEmbeddedStore(config.dataDir);
        try {
          const sql = await openMigratedStore(storeUrl ?? embedded!.url, {
            max: 1,
            onApplied: (m) =>
              process.stderr.write(
                `applied store migration ${String(m.version).padStart(4, '0')}_${m.name}\n`,
              ),
          });
          try {
            await fn(sql);
          } finally {
            await sql.end();
          }
        } finally {
          await embedded?.stop();
        }
      },
    },
    process.stderr,
  );
}
