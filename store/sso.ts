import type { Tx } from './db.ts';

/** An organization's OIDC single sign-on (store/migrations/0007_oauth.sql); the secret is sealed. */
export interface SsoConfigRow {
  org_id: string;
  id: string;
  issuer: string;
  client_id: string;
  client_secret_enc: string;
  provision_role: 'admin' | 'member' | null;
  /** A claim of the identity provider whose values pick the role of a new account. */
  role_claim: string | null;
  /** Claim value → role ('admin' or 'member'). */
  role_map: Record<string, 'admin' | 'member'>;
  /** Email domains the organization owns: a verified email in one links an existing account. */
  domains: string[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function upsertSsoConfig(
  sql: Tx,
  row: Pick<
    SsoConfigRow,
    | 'org_id'
    | 'id'
    | 'issuer'
    | 'client_id'
    | 'client_secret_enc'
    | 'provision_role'
    | 'enabled'
    | 'role_claim'
    | 'role_map'
    | 'domains'
  >,
): Promise<SsoConfigRow> {
  const [out] = await sql<SsoConfigRow[]>`
    insert into sso_configs (org_id, id, issuer, client_id, client_secret_enc, provision_role, enabled, role_claim, role_map, domains)
    values (${row.org_id}, ${row.id}, ${row.issuer}, ${row.client_id}, ${row.client_secret_enc}, ${row.provision_role},
      ${row.enabled}, ${row.role_claim}, ${sql.json(row.role_map)}, ${row.domains}::text[])
    on conflict (org_id) do update set issuer = excluded.issuer, client_id = excluded.client_id,
      client_secret_enc = excluded.client_secret_enc, provision_role = excluded.provision_role,
      enabled = excluded.enabled, role_claim = excluded.role_claim, role_map = excluded.role_map,
      domains = excluded.domains, updated_at = now()
    returning *`;
  return out!;
}

export async function findSsoConfig(sql: Tx, orgId: string): Promise<SsoConfigRow | null> {
  const [row] = await sql<SsoConfigRow[]>`select * from sso_configs where org_id = ${orgId}`;
  return row ?? null;
}

export async function deleteSsoConfig(sql: Tx, orgId: string): Promise<boolean> {
  const rows = await sql`delete from sso_configs where org_id = ${orgId} returning org_id`;
  return rows.length > 0;
}

/** Organizations offering SSO on the login page, with their names. */
export async function listEnabledSso(sql: Tx): Promise<Array<{ org_id: string; org_name: string }>> {
  return sql<Array<{ org_id: string; org_name: string }>>`
    select s.org_id, o.name as org_name from sso_configs s join organizations o on o.id = s.org_id
    where s.enabled order by o.name limit 20`;
}

/** The account an identity of the organization's provider (issuer and subject) was linked to. */
export async function findSsoLink(
  sql: Tx,
  orgId: string,
  issuer: string,
  subject: string,
): Promise<string | null> {
  const [row] = await sql<{ user_id: string }[]>`
    select user_id from sso_links where org_id = ${orgId} and issuer = ${issuer} and subject = ${subject}`;
  return row?.user_id ?? null;
}

export async function insertSsoLink(
  sql: Tx,
  link: { orgId: string; issuer: string; subject: string; userId: string },
): Promise<void> {
  await sql`
    insert into sso_links (org_id, issuer, subject, user_id)
    values (${link.orgId}, ${link.issuer}, ${link.subject}, ${link.userId})
    on conflict (org_id, issuer, subject) do nothing`;
}
