// What the first-run checklist reads of an organization (workspace/first-run.ts), in one round
// trip, and a person's dismissal of it (0030_first_run.sql).
import type { Tx } from './db.ts';

export interface FirstRunFacts {
  databases: boolean;
  /** A restricted database, or a credential limited to some people or roles, with a grant. */
  restrictedAndGranted: boolean;
  policies: boolean;
  /** Anyone besides the first person. */
  otherPeople: boolean;
  aiClients: boolean;
  workflows: boolean;
  /** The first database (the policy step's page lives under it), null when none. */
  firstDatabaseId: string | null;
}

export async function firstRunFacts(sql: Tx, orgId: string): Promise<FirstRunFacts> {
  const [row] = await sql<FirstRunFacts[]>`
    select
      exists (select 1 from databases where org_id = ${orgId}) as databases,
      (exists (
         select 1 from databases d join database_grants g on g.database_id = d.id
         where d.org_id = ${orgId} and d.restrict_access)
       or exists (
         select 1 from credential_grants g join credentials c on c.id = g.credential_id
           join databases d on d.id = c.database_id
         where d.org_id = ${orgId})) as "restrictedAndGranted",
      exists (select 1 from data_protection_policies where org_id = ${orgId}) as policies,
      (select count(*) from users where org_id = ${orgId}) > 1 as "otherPeople",
      exists (
        select 1 from oauth_grants g join users u on u.id = g.user_id
        where u.org_id = ${orgId} and g.revoked_at is null) as "aiClients",
      exists (select 1 from workflows where org_id = ${orgId}) as workflows,
      (select id from databases where org_id = ${orgId} order by inserted_at, id limit 1)
        as "firstDatabaseId"`;
  return row!;
}

export async function firstRunDismissed(sql: Tx, userId: string): Promise<boolean> {
  const rows = await sql`select 1 from first_run_dismissals where user_id = ${userId}`;
  return rows.length > 0;
}

export async function dismissFirstRun(sql: Tx, userId: string): Promise<void> {
  await sql`insert into first_run_dismissals (user_id) values (${userId}) on conflict do nothing`;
}
