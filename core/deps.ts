import type { AdapterPool, ConnectionConfig } from '../adapters/types.ts';
import type { Config } from '../config/env.ts';
import type { Mailer } from '../integrations/mail.ts';
import type { RequestNotifier } from '../integrations/review-notices.ts';
import type { AccessCache } from '../store/access-cache.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Sql } from '../store/db.ts';
import type { AgentHub } from '../tunnels/hub.ts';
import type { Logger } from './logger.ts';
import type { TemporalHandle } from './temporal.ts';

/** Pools by credential, rebuilt when the database or credential row changes (adapters/registry.ts). */
export interface PoolSource {
  acquire(
    key: { databaseId: string; credentialId: string; version: string },
    config: () => ConnectionConfig,
  ): AdapterPool;
  /** Closes every pool of a database (its settings changed, or it is gone). */
  invalidate(databaseId: string): Promise<void>;
  closeAll(): Promise<void>;
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
  /** Agent tunnels this process holds (tunnels/hub.ts); absent where none are served. */
  agents?: AgentHub;
  /**
   * Tells reviewers about new query requests. Built once per process (cli/boot.ts), so every
   * origin that submits a request — REST, console, dashboard, MCP — announces it the same way.
   */
  notify?: RequestNotifier;
  /** Outgoing e-mail, when SMTP_URL and SMTP_FROM are set (integrations/mail.ts). */
  mailer?: Mailer;
  /**
   * Access decisions kept between requests, emptied by the store's change notifications
   * (store/access-cache.ts); absent where there is none (dev mode's PGlite), closed at shutdown.
   */
  accessCache?: AccessCache;
}
