import type { Tx } from './db.ts';

/** Rows saved before an approved write ran (store/migrations/0028_undo.sql); `rows_enc` is sealed. */
export interface BackupRow {
  request_id: string;
  org_id: string;
  revision: number;
  verb: 'UPDATE' | 'DELETE';
  relation_schema: string;
  relation_name: string;
  key_columns: string[];
  columns: string[];
  assigned: string[];
  row_count: number;
  rows_enc: string;
  created_at: Date;
  expires_at: Date;
}

export async function insertBackup(sql: Tx, b: Omit<BackupRow, 'created_at'>): Promise<BackupRow> {
  const row = {
    ...b,
    key_columns: sql.json(b.key_columns),
    columns: sql.json(b.columns),
    assigned: sql.json(b.assigned),
  };
  const [out] = await sql<BackupRow[]>`insert into request_backups ${sql(row)} returning *`;
  return out!;
}

/** The backup of a request, if it has one that has not expired. */
export async function findBackup(sql: Tx, orgId: string, requestId: string): Promise<BackupRow | null> {
  const [row] = await sql<BackupRow[]>`
    select * from request_backups
     where request_id = ${requestId} and org_id = ${orgId} and expires_at > now()`;
  return row ?? null;
}

/** Deletes expired backups; returns how many. */
export async function pruneBackups(sql: Tx): Promise<number> {
  const rows = await sql`delete from request_backups where expires_at <= now() returning request_id`;
  return rows.length;
}
