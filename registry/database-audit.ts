// What the audit chain says about a database change: the non-secret settings of the database and
// of each credential before and after. Passwords and the client key are never values here, only
// named in secrets_changed; certificates (public, but long) appear as a short fingerprint.
import { createHash } from 'node:crypto';
import { changeOf, isEmptyChange } from '../audit/event-types.ts';
import { recordEvent } from '../audit/events.ts';
import type { QueryActor } from '../governance/types.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { credentialSettings } from './database-rules.ts';

export interface DatabaseState {
  db: DatabaseRow;
  credentials: CredentialRow[];
}

function fingerprint(pem: string | null): string | null {
  return pem === null ? null : `sha256:${createHash('sha256').update(pem).digest('hex').slice(0, 16)}`;
}

/** The settings an auditor compares, flat: database fields, then one entry per credential. */
export function databaseSnapshot(s: DatabaseState): Record<string, unknown> {
  const { db } = s;
  const out: Record<string, unknown> = {
    name: db.name,
    api_id: db.api_id,
    adapter: db.adapter,
    hostname: db.hostname,
    port: db.port,
    database: db.database,
    ssl: db.ssl,
    verify_server_hostname: db.verify_server_hostname,
    ssl_ca_cert: fingerprint(db.ssl_ca_cert),
    ssl_cert: fingerprint(db.ssl_client_cert),
    ssl_key_configured: db.ssl_client_key_enc !== null,
    restrict_access: db.restrict_access,
    review_bypass_allowed: db.review_bypass_allowed,
    group: db.group_name,
    slack_channel: db.slack_channel,
    agent_id: db.agent_id,
    ai_enabled: db.ai_enabled,
    ai_max_rows: db.ai_max_rows,
  };
  for (const c of s.credentials) out[`credential ${c.id}`] = credentialSettings(c);
  return out;
}

/**
 * Records one database event in the caller's transaction: created (before null), deleted (after
 * null) or updated (only what changed; nothing at all when nothing did).
 */
export async function auditDatabaseChange(
  tx: Tx,
  orgId: string,
  actor: QueryActor,
  before: DatabaseState | null,
  after: DatabaseState | null,
  secretsChanged: string[] = [],
): Promise<void> {
  const change = changeOf(
    before && databaseSnapshot(before),
    after && databaseSnapshot(after),
    secretsChanged,
  );
  if (isEmptyChange(change)) return;
  const db = (after ?? before)!.db;
  const event =
    before === null ? 'database.created' : after === null ? 'database.deleted' : 'database.updated';
  const names = [...Object.keys(change.after ?? {}), ...secretsChanged];
  await recordEvent(tx, {
    orgId,
    actor,
    origin: 'user',
    event,
    subject: { database_id: db.id, ...change },
    databaseId: db.id,
    outcome: 'allowed',
    detail:
      event === 'database.updated'
        ? `${db.name}: ${names.join(', ')}`
        : `${event === 'database.created' ? 'registered' : 'deleted'} ${db.name}`,
  });
}
