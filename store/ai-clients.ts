import type { Tx } from './db.ts';

/** An organization's limits on one AI client (store/migrations/0019_ai_client_controls.sql). */
export interface AiClientControlRow {
  org_id: string;
  client_id: string;
  disabled: boolean;
  database_ids: string[] | null;
  updated_by: string | null;
  updated_at: Date;
}

export async function findAiClientControl(
  sql: Tx,
  orgId: string,
  clientId: string,
): Promise<AiClientControlRow | null> {
  const [row] = await sql<AiClientControlRow[]>`
    select * from ai_client_controls where org_id = ${orgId} and client_id = ${clientId}`;
  return row ?? null;
}

export async function upsertAiClientControl(
  sql: Tx,
  c: {
    orgId: string;
    clientId: string;
    disabled: boolean;
    databaseIds: string[] | null;
    updatedBy: string | null;
  },
): Promise<AiClientControlRow> {
  const [row] = await sql<AiClientControlRow[]>`
    insert into ai_client_controls (org_id, client_id, disabled, database_ids, updated_by)
    values (${c.orgId}, ${c.clientId}, ${c.disabled}, ${c.databaseIds}, ${c.updatedBy})
    on conflict (org_id, client_id) do update set disabled = excluded.disabled,
      database_ids = excluded.database_ids, updated_by = excluded.updated_by, updated_at = now()
    returning *`;
  return row!;
}

/** AI clients people of the organization have connected (live grants), with their limits. */
export interface OrgAiClient {
  client_id: string;
  client_name: string;
  kind: string;
  people: number;
  last_used_at: Date | null;
  disabled: boolean;
  database_ids: string[] | null;
}

export async function listOrgAiClients(sql: Tx, orgId: string): Promise<OrgAiClient[]> {
  return sql<OrgAiClient[]>`
    select c.id as client_id, c.client_name, c.kind, count(distinct g.user_id)::int as people,
      max(g.last_used_at) as last_used_at,
      coalesce(ctl.disabled, false) as disabled, ctl.database_ids
    from oauth_grants g
    join users u on u.id = g.user_id and u.org_id = ${orgId}
    join oauth_clients c on c.id = g.client_id
    left join ai_client_controls ctl on ctl.org_id = ${orgId} and ctl.client_id = c.id
    where g.revoked_at is null
    group by c.id, c.client_name, c.kind, ctl.disabled, ctl.database_ids
    order by c.client_name`;
}
