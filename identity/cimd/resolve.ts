// Finds the client a client_id names: a registered client, or a metadata-document client whose
// https URL is fetched (draft-ietf-oauth-client-id-metadata-document-01 §4) when the stored copy
// is missing or stale. The copy lives in oauth_clients, so every api replica shares it.
import type { Tx } from '../../store/db.ts';
import { findClient, type OAuthClientRow, upsertMetadataClient } from '../../store/oauth.ts';
import { hitBuckets, readBuckets } from '../../store/rate-limits.ts';
import { cacheSeconds, checkClientIdUrl, checkDocument, isUrlClientId } from './document.ts';
import { CimdRefused } from './errors.ts';
import { type FetchConfig, fetchDocument } from './fetch.ts';

export type ResolveDeps = { sql: Tx; config: FetchConfig };

/** Metadata fetches one client address may cause per window (cached documents do not count). */
export const FETCH_WINDOW_SECONDS = 600;

export interface FetchGate {
  /** Runs just before a document would be fetched: the request's own cheap checks. */
  beforeFetch?: () => void;
  /** The requesting address and its fetch budget per FETCH_WINDOW_SECONDS. */
  address?: { value: string; limit: number };
}

/**
 * The client, or null when a non-URL client_id is not registered. Throws CimdRefused when the
 * client_id is a URL whose document cannot be used; nothing is stored then.
 */
export async function resolveClient(
  deps: ResolveDeps,
  clientId: string,
  gate: FetchGate = {},
): Promise<OAuthClientRow | null> {
  if (!isUrlClientId(clientId)) {
    const client = await findClient(deps.sql, clientId);
    return client?.kind === 'dcr' ? client : null;
  }
  const url = checkClientIdUrl(clientId);
  const stored = await findClient(deps.sql, clientId);
  if (stored?.kind === 'cimd' && stored.metadata_expires_at!.getTime() > Date.now()) return stored;
  gate.beforeFetch?.();
  if (gate.address) await spendFetch(deps.sql, gate.address.value, gate.address.limit);
  const fetched = await fetchDocument(url, deps.config);
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

/**
 * draft-ietf-oauth-client-id-metadata-document-01 §6.5: the fetch is made for an anonymous
 * party, so one address may only make the server fetch so many documents in a window.
 */
async function spendFetch(sql: Tx, address: string, limit: number): Promise<void> {
  const bucket = `cimd-fetch:${address}`;
  const state = (await readBuckets(sql, [bucket], FETCH_WINDOW_SECONDS)).get(bucket);
  if ((state?.hits ?? 0) >= limit) {
    throw new CimdRefused(
      'too many metadata documents were fetched for your address; try again later',
      'metadata fetch limit per address',
    );
  }
  await hitBuckets(sql, [bucket], FETCH_WINDOW_SECONDS);
}
