// Finds the client a client_id names: a registered client, or a metadata-document client whose
// https URL is fetched (draft-ietf-oauth-client-id-metadata-document-01 §4) when the stored copy
// is missing or stale. The copy lives in oauth_clients, so every api replica shares it.
import type { CimdConfig } from '../../config/env.ts';
import type { Tx } from '../../store/db.ts';
import { findClient, type OAuthClientRow, upsertMetadataClient } from '../../store/oauth.ts';
import { cacheSeconds, checkClientIdUrl, checkDocument, isUrlClientId } from './document.ts';
import { CimdRefused } from './errors.ts';
import { fetchDocument } from './fetch.ts';

export type ResolveDeps = { sql: Tx; config: { cimd: CimdConfig } };

/**
 * The client, or null when a non-URL client_id is not registered. Throws CimdRefused when the
 * client_id is a URL whose document cannot be used; nothing is stored then.
 */
export async function resolveClient(deps: ResolveDeps, clientId: string): Promise<OAuthClientRow | null> {
  if (!isUrlClientId(clientId)) {
    const client = await findClient(deps.sql, clientId);
    return client?.kind === 'dcr' ? client : null;
  }
  const url = checkClientIdUrl(clientId);
  const stored = await findClient(deps.sql, clientId);
  if (stored?.kind === 'cimd' && stored.metadata_expires_at!.getTime() > Date.now()) return stored;
  const fetched = await fetchDocument(url, deps.config.cimd);
  const client = checkDocument(clientId, fetched.body);
  const seconds = cacheSeconds(fetched.cacheControl);
  const row = await upsertMetadataClient(deps.sql, {
    id: clientId,
    ...client,
    expiresAt: new Date(Date.now() + seconds * 1000),
  });
  if (!row) throw new CimdRefused('its address is taken by another client', 'id of a registered client');
  return row;
}
