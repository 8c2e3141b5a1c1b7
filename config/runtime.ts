import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import pino from 'pino';
import type { AgentHub } from '../governance/agents/hub.ts';
import type { RequestNotifier } from '../governance/notify.ts';
import type { PoolSource } from '../governance/query.ts';
import { generateKey, Keyring } from '../store/crypto.ts';
import type { Sql } from '../store/db.ts';
import type { Config } from './env.ts';

export type Logger = pino.Logger;

/** Connections to Temporal, shared by the API (start, signal, query) and readiness checks. */
export interface TemporalHandle {
  connection: Connection;
  client: Client;
  namespace: string;
  taskQueue: string;
}

/** What domain functions and route factories receive (STYLE.md 3: a typed deps object). */
export interface Deps {
  config: Config;
  sql: Sql;
  keyring: Keyring;
  logger: Logger;
  temporal: TemporalHandle | null;
  /** Connection pools to target databases, one per credential (adapters/registry.ts). */
  pools: PoolSource;
  /** Agent tunnels this process holds (governance/agents/hub.ts); absent where none are served. */
  agents?: AgentHub;
  /**
   * Tells reviewers about new query requests. Built once per process (cli/boot.ts), so every
   * origin that submits a request — REST, console, dashboard, MCP — announces it the same way.
   */
  notify?: RequestNotifier;
}

/**
 * Logs are JSON lines. Anything that could carry a secret is redacted by path as a second
 * line of defence; the first is never putting secrets in log objects at all.
 */
export function createLogger(level: Config['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'countersign' },
      redact: {
        paths: [
          '*.password',
          '*.secret',
          '*.token',
          '*.authorization',
          '*["x-api-key"]',
          '*.cookie',
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * The encryption key: COUNTERSIGN_ENCRYPTION_KEY, or in dev mode a key generated once and
 * kept in the data folder (mode 0600). A production process without a key refuses to start.
 */
export async function loadKeyring(config: Config, allowGenerated: boolean): Promise<Keyring> {
  if (config.encryptionKey) return Keyring.fromBase64(config.encryptionKey, config.encryptionOldKeys);
  if (!allowGenerated) {
    throw new Error(
      'COUNTERSIGN_ENCRYPTION_KEY is required (base64 of 32 random bytes: `openssl rand -base64 32`)',
    );
  }
  await mkdir(config.dataDir, { recursive: true });
  const file = join(config.dataDir, 'encryption.key');
  let key: string;
  try {
    key = (await readFile(file, 'utf8')).trim();
  } catch {
    key = generateKey();
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  }
  return Keyring.fromBase64(key, config.encryptionOldKeys);
}

export async function connectTemporal(address: string, config: Config): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address, interceptors: [retryExceptQueries] });
  return {
    connection,
    client: new Client({ connection, namespace: config.temporalNamespace }),
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
  };
}

const retryAll = makeGrpcRetryInterceptor(defaultGrpcRetryOptions());

/**
 * The SDK's retry interceptor for every call but workflow queries. The API queries a run's live
 * state with a short timeout and falls back to the stored state, so retrying a query (e.g. sent
 * to a dead worker's sticky queue) only leaves timers behind, and a retry timer that fires
 * after the connection closed throws outside any promise.
 */
const retryExceptQueries: Interceptor = (options, nextCall) =>
  options.method_definition.path.endsWith('/QueryWorkflow')
    ? new InterceptingCall(nextCall(options))
    : retryAll(options, nextCall);
