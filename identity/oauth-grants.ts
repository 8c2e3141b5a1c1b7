// The user's view of their connected AI clients (grants).
import type { Tx } from '../store/db.ts';
import {
  type ConnectedClient,
  deleteConsent,
  findGrant,
  listUserGrants,
  revokeUserGrant,
} from '../store/oauth.ts';

/** Active grants of a user, newest first, with the client's name. */
export function listConnectedClients(sql: Tx, userId: string): Promise<ConnectedClient[]> {
  return listUserGrants(sql, userId);
}

/**
 * Disconnects a client: the grant is revoked (its refresh tokens stop working, and its access
 * tokens on their next MCP request) and the remembered consent is forgotten, so reconnecting
 * asks the user again.
 */
export async function disconnectClient(sql: Tx, userId: string, grantId: string): Promise<boolean> {
  const grant = await findGrant(sql, grantId);
  if (!grant || grant.user_id !== userId) return false;
  const revoked = await revokeUserGrant(sql, userId, grantId);
  await deleteConsent(sql, userId, grant.client_id);
  return revoked;
}
