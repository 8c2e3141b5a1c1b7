import { DEFAULT_PORTS } from '../adapters/types.ts';
import type { Caller } from '../audit/actors.ts';
import { connectionConfigFor, type RoutedConnectionConfig } from '../governance/connections.ts';
import type { Keyring } from '../store/crypto.ts';
import { findCredentialByUsername } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { AgentTunnels } from '../tunnels/hub.ts';
import { routedAdapterFor } from '../tunnels/pools.ts';
import type { CreateDatabaseInput } from './database-input.ts';
import { getDatabase } from './databases.ts';

/** SPEC.md 7: `ok`, or the database's own error message; null when database or credential is unknown. */
export async function checkConnection(
  deps: { sql: Tx; keyring: Keyring; agents?: AgentTunnels },
  caller: Caller,
  databaseId: string,
  username: string,
): Promise<string | null> {
  let found: Awaited<ReturnType<typeof getDatabase>>;
  try {
    found = await getDatabase(deps.sql, caller, databaseId);
  } catch {
    return null;
  }
  const cred = await findCredentialByUsername(deps.sql, found.db.id, username);
  if (!cred) return null;
  // A fresh pool, not the shared one: the point is to prove a new connection can be opened
  // (through the agent's tunnel for a database behind one; its errors name the agent).
  const pool = routedAdapterFor(found.db.adapter, deps.agents).connect(
    connectionConfigFor(deps.keyring, found.db, cred),
  );
  try {
    await pool.check();
    return 'ok';
  } catch (err) {
    // Adapter errors carry the server's message with secrets already removed.
    return err instanceof Error && err.message ? err.message : 'connection failed';
  } finally {
    await pool.close().catch(() => {});
  }
}

/** One credential of a registration that did not connect, with the database's own words. */
export interface FailedCheck {
  /** Position in the input's `credentials`. */
  index: number;
  username: string;
  message: string;
}

/**
 * Opens one connection per credential of a database that is not saved yet, so a wrong password
 * or host is caught before anything is stored. The messages are the servers' own, with the
 * typed password removed wherever a server echoes it back.
 */
export async function checkNewConnections(
  deps: { agents?: AgentTunnels },
  input: CreateDatabaseInput,
): Promise<FailedCheck[]> {
  const checks = input.credentials.map(async (c, index) => {
    const config: RoutedConnectionConfig = {
      agentId: input.agent_id ?? null,
      adapter: input.adapter,
      hostname: c.hostname ?? input.hostname,
      port: input.port ?? DEFAULT_PORTS[input.adapter],
      database: input.database,
      username: c.username,
      password: c.password,
      ssl: {
        enabled: input.ssl ?? false,
        caCert: input.ssl_ca_cert ?? null,
        verifyServerHostname: input.verify_server_hostname ?? false,
        clientCert: input.ssl_cert ?? null,
        clientKey: input.ssl_key ?? null,
      },
      timeoutSeconds: c.timeout ?? null,
    };
    const pool = routedAdapterFor(input.adapter, deps.agents).connect(config);
    try {
      await pool.check();
      return null;
    } catch (err) {
      const raw = err instanceof Error && err.message ? err.message : 'connection failed';
      return { index, username: c.username, message: scrub(raw, [c.password, input.ssl_key ?? '']) };
    } finally {
      await pool.close().catch(() => {});
    }
  });
  return (await Promise.all(checks)).filter((f): f is FailedCheck => f !== null);
}

/** Removes every secret (at least 3 characters long, so scrubbing never shreds the text). */
function scrub(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) if (s.length >= 3) out = out.split(s).join('[redacted]');
  return out;
}
