import type { AdapterName } from '../adapters/types.ts';
import type { Tx } from './db.ts';

export type RiskLevelName = 'ddl' | 'no_where' | 'large' | 'ordinary';
/** Per risk level: the approvals it needs, and optionally the role its approvers must hold. */
export type RiskReviews = Partial<
  Record<RiskLevelName, { reviews_required: number; approver_role?: 'admin' | 'super_admin' | null }>
>;

export interface DatabaseRow {
  id: string;
  org_id: string;
  api_id: string | null;
  name: string;
  adapter: AdapterName;
  hostname: string;
  port: number;
  database: string;
  ssl: boolean;
  verify_server_hostname: boolean;
  ssl_ca_cert: string | null;
  ssl_client_cert: string | null;
  ssl_client_key_enc: string | null;
  restrict_access: boolean;
  review_bypass_allowed: boolean;
  group_name: string | null;
  slack_channel: string | null;
  agent_id: string | null;
  ai_enabled: boolean;
  ai_max_rows: number;
  inserted_at: Date;
  updated_at: Date;
}

export interface CredentialRow {
  id: string;
  database_id: string;
  username: string;
  password_enc: string;
  hostname: string | null;
  ai_allowed: boolean;
  timeout: number | null;
  reviews_required: number;
  default_credential: boolean;
  /** Only users and roles granted the credential may use it (credential_grants). */
  restrict_access: boolean;
  /** A query that waits for this credential's reviews must say why. */
  justification_required: boolean;
  /** Previewed rows above which a write is `large` (governance/risk-rules.ts). */
  large_write_rows: number;
  /** Approvals (and approver role) per risk level, above reviews_required (governance/risk-rules.ts). */
  risk_reviews: RiskReviews;
  /** Rows of one approved write kept for undo at most (governance/undo/); above it, no undo. */
  undo_max_rows: number;
  created_at: Date;
  updated_at: Date;
}

/** Columns a create or update may set (everything but ids and timestamps). */
export type DatabaseFields = Omit<DatabaseRow, 'id' | 'org_id' | 'inserted_at' | 'updated_at'>;
export type CredentialFields = Omit<CredentialRow, 'id' | 'database_id' | 'created_at' | 'updated_at'>;

const DATABASE_COLUMNS = [
  'api_id',
  'name',
  'adapter',
  'hostname',
  'port',
  'database',
  'ssl',
  'verify_server_hostname',
  'ssl_ca_cert',
  'ssl_client_cert',
  'ssl_client_key_enc',
  'restrict_access',
  'review_bypass_allowed',
  'group_name',
  'slack_channel',
  'agent_id',
  'ai_enabled',
  'ai_max_rows',
] as const satisfies readonly (keyof DatabaseFields)[];

/** Rows of one write a credential keeps for undo unless it says otherwise. */
export const DEFAULT_UNDO_MAX_ROWS = 10_000;

/** A credential's settings: every column but its identity, username and secret. */
export const CREDENTIAL_SETTINGS = [
  'hostname',
  'ai_allowed',
  'timeout',
  'reviews_required',
  'default_credential',
  'restrict_access',
  'justification_required',
  'large_write_rows',
  'risk_reviews',
  'undo_max_rows',
] as const satisfies readonly (keyof CredentialFields)[];

const CREDENTIAL_COLUMNS = ['username', 'password_enc', ...CREDENTIAL_SETTINGS] as const;

export async function insertDatabase(
  sql: Tx,
  id: string,
  orgId: string,
  fields: DatabaseFields,
): Promise<DatabaseRow> {
  const row = { id, org_id: orgId, ...fields };
  const [out] = await sql<DatabaseRow[]>`insert into databases ${sql(row)} returning *`;
  return out!;
}

export async function updateDatabase(
  sql: Tx,
  id: string,
  fields: Partial<DatabaseFields>,
): Promise<DatabaseRow> {
  const columns = DATABASE_COLUMNS.filter((c) => c in fields);
  const [out] = columns.length
    ? await sql<DatabaseRow[]>`
        update databases set ${sql(fields, ...columns)}, updated_at = now() where id = ${id} returning *`
    : await sql<DatabaseRow[]>`update databases set updated_at = now() where id = ${id} returning *`;
  return out!;
}

export async function findDatabase(sql: Tx, orgId: string, id: string): Promise<DatabaseRow | null> {
  const [row] = await sql<DatabaseRow[]>`select * from databases where id = ${id} and org_id = ${orgId}`;
  return row ?? null;
}

export async function findDatabaseByApiId(
  sql: Tx,
  orgId: string,
  apiId: string,
): Promise<DatabaseRow | null> {
  const [row] = await sql<
    DatabaseRow[]
  >`select * from databases where api_id = ${apiId} and org_id = ${orgId}`;
  return row ?? null;
}

/** Lists in id order after `after` (keyset pagination), optionally one group, optionally only `ids`. */
export async function listDatabases(
  sql: Tx,
  orgId: string,
  opts: { group?: string | undefined; after?: string | undefined; limit: number; visibleTo?: string | null },
): Promise<DatabaseRow[]> {
  return sql<DatabaseRow[]>`
    select d.* from databases d
    where d.org_id = ${orgId}
      ${opts.group !== undefined ? sql`and d.group_name = ${opts.group}` : sql``}
      ${opts.after ? sql`and d.id > ${opts.after}` : sql``}
      ${
        opts.visibleTo
          ? sql`and (not d.restrict_access or exists (
              select 1 from database_grants g where g.database_id = d.id and g.user_id = ${opts.visibleTo}))`
          : sql``
      }
    order by d.id
    limit ${opts.limit}`;
}

/** Deletes the database; credentials and grants go with it (on delete cascade). */
export async function deleteDatabase(sql: Tx, id: string): Promise<void> {
  await sql`delete from databases where id = ${id}`;
}

export async function listCredentials(sql: Tx, databaseIds: string[]): Promise<CredentialRow[]> {
  if (databaseIds.length === 0) return [];
  return sql<CredentialRow[]>`
    select * from credentials where database_id in ${sql(databaseIds)} order by database_id, created_at, id`;
}

export async function findCredentialByUsername(
  sql: Tx,
  databaseId: string,
  username: string,
): Promise<CredentialRow | null> {
  const [row] = await sql<CredentialRow[]>`
    select * from credentials where database_id = ${databaseId} and username = ${username}`;
  return row ?? null;
}

export async function findCredential(sql: Tx, databaseId: string, id: string): Promise<CredentialRow | null> {
  const [row] = await sql<
    CredentialRow[]
  >`select * from credentials where database_id = ${databaseId} and id = ${id}`;
  return row ?? null;
}

export async function insertCredential(
  sql: Tx,
  id: string,
  databaseId: string,
  fields: CredentialFields,
): Promise<CredentialRow> {
  const row = {
    id,
    database_id: databaseId,
    ...fields,
    risk_reviews: sql.json(fields.risk_reviews as never),
  };
  const [out] = await sql<CredentialRow[]>`
    insert into credentials ${sql(row)} returning *`;
  return out!;
}

export async function updateCredential(
  sql: Tx,
  id: string,
  fields: Partial<CredentialFields>,
): Promise<CredentialRow> {
  const columns = CREDENTIAL_COLUMNS.filter((c) => c in fields);
  const values =
    fields.risk_reviews !== undefined
      ? { ...fields, risk_reviews: sql.json(fields.risk_reviews as never) }
      : fields;
  const [out] = columns.length
    ? await sql<CredentialRow[]>`
        update credentials set ${sql(values as never, ...columns)}, updated_at = now() where id = ${id} returning *`
    : await sql<CredentialRow[]>`select * from credentials where id = ${id}`;
  return out!;
}

export async function deleteCredential(sql: Tx, id: string): Promise<void> {
  await sql`delete from credentials where id = ${id}`;
}

export async function hasGrant(sql: Tx, databaseId: string, userId: string): Promise<boolean> {
  const rows =
    await sql`select 1 from database_grants where database_id = ${databaseId} and user_id = ${userId}`;
  return rows.length > 0;
}

/** A credential and its database, by the credential's id within the organization. */
export async function findCredentialAndDatabase(
  sql: Tx,
  orgId: string,
  credentialId: string,
): Promise<{ db: DatabaseRow; cred: CredentialRow } | null> {
  const [cred] = await sql<CredentialRow[]>`
    select c.* from credentials c join databases d on d.id = c.database_id
    where c.id = ${credentialId} and d.org_id = ${orgId}`;
  if (!cred) return null;
  const db = await findDatabase(sql, orgId, cred.database_id);
  return db ? { db, cred } : null;
}
