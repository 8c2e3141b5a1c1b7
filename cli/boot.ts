import type { LoadedDataConverter } from '@temporalio/common';
import type { Config } from '../config/env.ts';
import type { Deps } from '../core/deps.ts';
import { createLogger } from '../core/logger.ts';
import { outboundPolicy } from '../core/outbound/policy.ts';
import { dataConverters, serviceCodec } from '../core/payload-codec.ts';
import { connectTemporal, type TemporalHandle } from '../core/temporal.ts';
import { canSee } from '../governance/access.ts';
import { bootstrap } from '../identity/bootstrap.ts';
import { createChatClient } from '../integrations/chat.ts';
import { smtpMailer } from '../integrations/mail.ts';
import {
  allNotifiers,
  chatRequestNotifier,
  mailRequestNotifier,
  type RequestNotifier,
} from '../integrations/review-notices.ts';
import { startAccessCache } from '../store/access-cache.ts';
import { openStore, type Sql } from '../store/db.ts';
import { loadKeyring } from '../store/keyring-file.ts';
import { type Migration, migrate } from '../store/migrate.ts';
import { AgentHub } from '../tunnels/hub.ts';
import { createAgentAwarePools } from '../tunnels/pools.ts';
import { RelayClient } from '../tunnels/relay-client.ts';
import { AgentRouter } from '../tunnels/router.ts';
import { ensureSearchAttributes } from './temporal-setup.ts';

/**
 * Opens the store and applies pending migrations (every process does this at start), saying
 * which it applied. Refuses a store migrated by a newer release (StoreTooNewError).
 */
export async function openMigratedStore(
  url: string,
  options: { max?: number; onApplied?: (m: Migration) => void } = {},
): Promise<Sql> {
  const sql = openStore(url, options.max ? { max: options.max } : {});
  try {
    await migrate(sql, undefined, options.onApplied);
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  return sql;
}

/**
 * Builds the deps of a long-running process: store (migrated), keyring, logger, Temporal.
 * `dev` allows a generated encryption key in the data folder.
 */
export async function buildDeps(
  config: Config,
  opts: { storeUrl: string; storeMax?: number; temporalAddress: string | null; dev: boolean },
): Promise<Deps> {
  const logger = createLogger(config.logLevel);
  const keyring = await loadKeyring(config, opts.dev);
  const sql = await openMigratedStore(opts.storeUrl, {
    ...(opts.storeMax ? { max: opts.storeMax } : {}),
    onApplied: (m) => logger.info({ version: m.version, name: m.name }, 'store migration applied'),
  });
  const converter = dataConverters(serviceCodec({ sql, keyring })).client;
  const temporal = opts.temporalAddress
    ? await connectWithRetry(opts.temporalAddress, config, logger, converter)
    : null;
  if (temporal) await ensureSearchAttributes(temporal, logger);
  // Agent tunnels live in the process that holds the agent's WebSocket; any other process (the
  // worker, another replica) relays through that one (agent/README.md "Replicas").
  const agents = new AgentHub({ sql, logger });
  agents.via = new AgentRouter(agents, new RelayClient({ sql, keyring, logger }));
  // Dev mode's PGlite serves every connection from one session, so no LISTEN of its own: there
  // decisions are read on every request.
  const accessCache = opts.dev ? undefined : await startAccessCache(sql, opts.storeUrl, logger);
  return {
    config,
    sql,
    keyring,
    logger,
    temporal,
    pools: createAgentAwarePools(agents),
    agents,
    notify: requestNotifier(config, sql, logger),
    ...(config.smtp ? { mailer: smtpMailer(config.smtp) } : {}),
    ...(accessCache ? { accessCache } : {}),
  };
}

/** The reviewers' notifier: the database's chat channel through the configured chat service. */
export function requestNotifier(config: Config, sql: Sql, logger: Deps['logger']): RequestNotifier {
  const chat = createChatClient(
    { chatApiUrl: config.chatApiUrl, chatBotToken: config.chatBotToken },
    outboundPolicy(config),
  );
  const viaChat = chatRequestNotifier({ sql, logger, baseUrl: config.baseUrl }, (m) => chat.post(m));
  if (!config.smtp) return viaChat;
  const mailer = smtpMailer(config.smtp);
  return allNotifiers(
    viaChat,
    mailRequestNotifier(
      {
        sql,
        logger,
        baseUrl: config.baseUrl,
        canSee: (db, person) => canSee(sql, db, { kind: 'user', ...person }),
      },
      (m) => mailer.send(m),
    ),
  );
}

async function connectWithRetry(
  address: string,
  config: Config,
  logger: Deps['logger'],
  converter: LoadedDataConverter,
): Promise<TemporalHandle> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await connectTemporal(address, config, converter);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      logger.warn({ address }, 'temporal not reachable yet; retrying');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/**
 * First start: create the organization, super admin and API key, and print the generated
 * secrets once, to the terminal only (not through the JSON log).
 */
export async function bootstrapAndAnnounce(
  deps: Deps,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const result = await bootstrap(deps.sql, {
    adminEmail: deps.config.adminEmail,
    adminPassword: deps.config.adminPassword,
    apiKey: deps.config.firstApiKey,
  });
  if (!result) return;
  const lines = [
    '',
    '  Countersign: first start, created the first organization.',
    `  Super admin:  ${result.adminEmail}`,
    result.generatedPassword
      ? `  Password:     ${result.generatedPassword}`
      : '  Password:     (from COUNTERSIGN_ADMIN_PASSWORD)',
    result.generatedApiKey
      ? `  API key:      ${result.generatedApiKey}`
      : '  API key:      (from COUNTERSIGN_API_KEY)',
    '  These secrets are shown once and stored only as hashes. Keep them now.',
    '',
  ];
  out.write(`${lines.join('\n')}\n`);
}
