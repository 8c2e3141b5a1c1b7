import { connectionConfigFor } from '../governance/connections.ts';
import type { QueryActor } from '../governance/query.ts';
import type { Keyring } from '../store/crypto.ts';
import { findCredentialByUsername } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { AgentTunnels } from '../tunnels/hub.ts';
import { routedAdapterFor } from '../tunnels/pools.ts';
import { getDatabase } from './databases.ts';

/** SPEC.md 7: `ok`, or the database's own error message; null when database or credential is unknown. */
export async function checkConnection(
  deps: { sql: Tx; keyring: Keyring; agents?: AgentTunnels },
  orgId: string,
  actor: QueryActor,
  databaseId: string,
  username: string,
): Promise<string | null> {
  let found: Awaited<ReturnType<typeof getDatabase>>;
  try {
    found = await getDatabase(deps.sql, orgId, actor, databaseId);
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
