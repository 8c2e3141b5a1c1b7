import { type AdapterPool, type ConnectionConfig, DEFAULT_PORTS } from '../adapters/types.ts';
import type { PoolSource } from '../core/deps.ts';
import type { Keyring } from '../store/crypto.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';

/** A connection config that may name the agent it goes through (tunnels/pools.ts). */
export interface RoutedConnectionConfig extends ConnectionConfig {
  /** SPEC.md 2.2 `agent_id`: the database is reached only through this agent's tunnel. */
  agentId: string | null;
}

/**
 * The connection settings of one credential of one database, with its secrets opened.
 * The result must never be logged or returned: it holds the password and the client key.
 */
export function connectionConfigFor(
  keyring: Keyring,
  db: DatabaseRow,
  cred: CredentialRow,
): RoutedConnectionConfig {
  return {
    agentId: db.agent_id,
    adapter: db.adapter,
    // SPEC.md 2.2: a credential may carry its own hostname (e.g. a read replica).
    hostname: cred.hostname ?? db.hostname,
    port: db.port ?? DEFAULT_PORTS[db.adapter],
    database: db.database,
    username: cred.username,
    password: keyring.decrypt(cred.password_enc, cred.id),
    ssl: {
      enabled: db.ssl,
      caCert: db.ssl_ca_cert,
      verifyServerHostname: db.verify_server_hostname,
      clientCert: db.ssl_client_cert,
      clientKey: db.ssl_client_key_enc ? keyring.decrypt(db.ssl_client_key_enc, db.id) : null,
    },
    timeoutSeconds: cred.timeout,
  };
}

/**
 * Pools are versioned by the rows they were built from: any change to either makes a new one.
 * Asked twice by every governed query, so numbers rather than two ISO strings.
 */
export function poolVersion(db: DatabaseRow, cred: CredentialRow): string {
  return `${db.updated_at.getTime()}|${cred.updated_at.getTime()}`;
}

/**
 * The pool of one credential, opened with its secrets on first use and rebuilt when the
 * database or credential changes (its version). The only way code reaches a target's pool.
 */
export function poolFor(
  deps: { pools: PoolSource; keyring: Keyring },
  db: DatabaseRow,
  cred: CredentialRow,
): AdapterPool {
  return deps.pools.acquire(
    { databaseId: db.id, credentialId: cred.id, version: poolVersion(db, cred) },
    () => connectionConfigFor(deps.keyring, db, cred),
  );
}
