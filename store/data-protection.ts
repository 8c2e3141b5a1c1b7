import type { Tx } from './db.ts';
import type { Role } from './users.ts';

/** What a rule does to a column (governance/protection/README.md "Rule kinds"). */
export type RuleAction = 'show' | 'hide' | 'mask' | 'hash' | 'partial';
export const RULE_ACTIONS: readonly RuleAction[] = ['show', 'hide', 'mask', 'hash', 'partial'];

export interface PolicyRow {
  id: string;
  org_id: string;
  database_id: string;
  name: string;
  description: string;
  hash_salt: string;
  created_at: Date;
  updated_at: Date;
}

/** One column rule; `schema_name` null matches any schema, `column_name` '*' every other column. */
export interface RuleRow {
  schema_name: string | null;
  table_name: string;
  column_name: string;
  action: RuleAction;
  keep_first: number;
  keep_last: number;
}

export interface AssignmentRow {
  policy_id: string;
  database_id: string;
  user_id: string | null;
  role: Role | null;
  created_at: Date;
}

export interface PolicyWithRules {
  policy: PolicyRow;
  rules: RuleRow[];
}

export async function insertPolicy(
  sql: Tx,
  row: Pick<PolicyRow, 'id' | 'org_id' | 'database_id' | 'name' | 'description' | 'hash_salt'>,
): Promise<PolicyRow> {
  const [out] = await sql<PolicyRow[]>`insert into data_protection_policies ${sql(row)} returning *`;
  return out!;
}

export async function updatePolicy(
  sql: Tx,
  id: string,
  fields: Partial<Pick<PolicyRow, 'name' | 'description'>>,
): Promise<PolicyRow> {
  const columns = (['name', 'description'] as const).filter((c) => fields[c] !== undefined);
  const [out] = columns.length
    ? await sql<PolicyRow[]>`
        update data_protection_policies set ${sql(fields, ...columns)}, updated_at = now() where id = ${id} returning *`
    : await sql<
        PolicyRow[]
      >`update data_protection_policies set updated_at = now() where id = ${id} returning *`;
  return out!;
}

export async function deletePolicy(sql: Tx, id: string): Promise<void> {
  await sql`delete from data_protection_policies where id = ${id}`;
}

export async function findPolicy(sql: Tx, databaseId: string, id: string): Promise<PolicyRow | null> {
  const [row] = await sql<PolicyRow[]>`
    select * from data_protection_policies where id = ${id} and database_id = ${databaseId}`;
  return row ?? null;
}

export async function listPolicies(sql: Tx, databaseId: string): Promise<PolicyRow[]> {
  return sql<
    PolicyRow[]
  >`select * from data_protection_policies where database_id = ${databaseId} order by id`;
}

/** Replaces the rules of a policy, keeping their order. */
export async function replaceRules(sql: Tx, policyId: string, rules: RuleRow[]): Promise<void> {
  await sql`delete from data_protection_rules where policy_id = ${policyId}`;
  if (rules.length === 0) return;
  const rows = rules.map((r, position) => ({ policy_id: policyId, position, ...r }));
  await sql`insert into data_protection_rules ${sql(rows)}`;
}

export async function listRules(sql: Tx, policyIds: string[]): Promise<Map<string, RuleRow[]>> {
  const out = new Map<string, RuleRow[]>(policyIds.map((id) => [id, []]));
  if (policyIds.length === 0) return out;
  const rows = await sql<(RuleRow & { policy_id: string })[]>`
    select policy_id, schema_name, table_name, column_name, action, keep_first, keep_last
      from data_protection_rules where policy_id in ${sql(policyIds)} order by policy_id, position`;
  for (const { policy_id, ...rule } of rows) out.get(policy_id)?.push(rule);
  return out;
}

export async function listAssignments(sql: Tx, policyIds: string[]): Promise<AssignmentRow[]> {
  if (policyIds.length === 0) return [];
  return sql<AssignmentRow[]>`
    select * from data_protection_assignments where policy_id in ${sql(policyIds)}
     order by policy_id, role nulls last, user_id`;
}

/**
 * Assigns a policy to a user or a role on its database, replacing the policy that user or
 * role had there before (one policy per user and per role on a database).
 */
export async function assignPolicy(
  sql: Tx,
  a: { policyId: string; databaseId: string; userId: string | null; role: Role | null },
): Promise<AssignmentRow> {
  await (a.userId
    ? sql`delete from data_protection_assignments where database_id = ${a.databaseId} and user_id = ${a.userId}`
    : sql`delete from data_protection_assignments where database_id = ${a.databaseId} and role = ${a.role}`);
  const [row] = await sql<AssignmentRow[]>`
    insert into data_protection_assignments (policy_id, database_id, user_id, role)
    values (${a.policyId}, ${a.databaseId}, ${a.userId}, ${a.role}) returning *`;
  return row!;
}

/** Removes one assignment; false when there was none. */
export async function unassignPolicy(
  sql: Tx,
  policyId: string,
  target: { userId: string } | { role: Role },
): Promise<boolean> {
  const rows =
    'userId' in target
      ? await sql`delete from data_protection_assignments where policy_id = ${policyId} and user_id = ${target.userId} returning 1`
      : await sql`delete from data_protection_assignments where policy_id = ${policyId} and role = ${target.role} returning 1`;
  return rows.length > 0;
}

/**
 * The policy that applies to a user on a database: their own assignment wins over their
 * role's. One indexed query: this runs before every governed query.
 */
export async function applicablePolicy(
  sql: Tx,
  databaseId: string,
  userId: string,
  role: Role,
): Promise<PolicyWithRules | null> {
  const [policy] = await sql<PolicyRow[]>`
    select p.* from data_protection_assignments a
      join data_protection_policies p on p.id = a.policy_id
     where a.database_id = ${databaseId} and (a.user_id = ${userId} or a.role = ${role})
     order by (a.user_id is not null) desc
     limit 1`;
  if (!policy) return null;
  const rules = await listRules(sql, [policy.id]);
  return { policy, rules: rules.get(policy.id) ?? [] };
}
