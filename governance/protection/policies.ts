// Admin management of data-protection policies: CRUD of a database's policies and their column
// rules, and their assignment to users and roles.
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { Caller, QueryActor, QueryOrigin } from '../../audit/actors.ts';
import { changeOf, isEmptyChange } from '../../audit/event-types.ts';
import { recordEvent } from '../../audit/events.ts';
import { conflict, forbidden, notFound, validationFailed } from '../../core/errors.ts';
import { parseInput } from '../../core/input.ts';
import {
  type AssignmentRow,
  applicablePolicy,
  assignPolicy,
  deletePolicy as deletePolicyRow,
  findPolicy,
  insertPolicy,
  listAssignments,
  listPolicies as listPolicyRows,
  listRules,
  type PolicyRow,
  RULE_ACTIONS,
  type RuleRow,
  replaceRules,
  updatePolicy,
} from '../../store/data-protection.ts';
import { findDatabase } from '../../store/databases.ts';
import type { Sql, Tx } from '../../store/db.ts';
import { newId } from '../../store/ids.ts';
import { findUserById, ROLES, type Role } from '../../store/users.ts';

const Name = (what: string) => v.pipe(v.string(), v.minLength(1, `${what} is required`), v.maxLength(128));

const Rule = v.pipe(
  v.object({
    schema: v.optional(v.nullable(Name('schema')), null),
    table: Name('table'),
    column: Name('column'),
    action: v.picklist(RULE_ACTIONS, `action must be one of ${RULE_ACTIONS.join(', ')}`),
    keep_first: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(64)), 0),
    keep_last: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(64)), 0),
  }),
  v.check(
    (r) => r.action !== 'partial' || r.keep_first + r.keep_last > 0,
    'a partial rule keeps keep_first and/or keep_last characters',
  ),
);

const Assignments = v.object({
  users: v.optional(v.array(v.string()), []),
  roles: v.optional(v.array(v.picklist(ROLES, `role must be one of ${ROLES.join(', ')}`)), []),
});

export const CreatePolicy = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200)),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000)), ''),
  rules: v.pipe(v.array(Rule), v.maxLength(2000)),
  assignments: v.optional(Assignments),
});
export const PatchPolicy = v.object({
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200))),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  rules: v.optional(v.pipe(v.array(Rule), v.maxLength(2000))),
});
export const PutAssignments = Assignments;

export type CreatePolicyInput = v.InferOutput<typeof CreatePolicy>;
export type PatchPolicyInput = v.InferOutput<typeof PatchPolicy>;
export type AssignmentsInput = v.InferOutput<typeof Assignments>;

export interface PolicyView {
  policy: PolicyRow;
  rules: RuleRow[];
  assignments: AssignmentRow[];
}

/** Policies of a database the admin's organization owns. */
export async function listPolicies(sql: Sql, orgId: string, databaseId: string): Promise<PolicyView[]> {
  await mustFindDatabase(sql, orgId, databaseId);
  const policies = await listPolicyRows(sql, databaseId);
  const ids = policies.map((p) => p.id);
  const [rules, assignments] = await Promise.all([listRules(sql, ids), listAssignments(sql, ids)]);
  return policies.map((policy) => ({
    policy,
    rules: rules.get(policy.id) ?? [],
    assignments: assignments.filter((a) => a.policy_id === policy.id),
  }));
}

export async function getPolicy(
  sql: Sql,
  orgId: string,
  databaseId: string,
  id: string,
): Promise<PolicyView> {
  await mustFindDatabase(sql, orgId, databaseId);
  return view(sql, await mustFindPolicy(sql, databaseId, id));
}

/**
 * Input is raw (a JSON body, the Data protection page's form) and checked here with the one
 * schema both doors use, so both answer the same field errors.
 */
export async function createPolicy(
  sql: Sql,
  { orgId, actor, origin }: Caller,
  databaseId: string,
  raw: unknown,
): Promise<PolicyView> {
  const input = parseInput(CreatePolicy, raw);
  await mustFindDatabase(sql, orgId, databaseId);
  checkUniqueRules(input.rules);
  return sql.begin(async (tx) => {
    const policy = await insertPolicy(tx, {
      id: newId('dpp'),
      org_id: orgId,
      database_id: databaseId,
      name: input.name,
      description: input.description,
      hash_salt: randomBytes(16).toString('hex'),
    }).catch(onDuplicateName);
    await replaceRules(tx, policy.id, input.rules.map(toRuleRow));
    if (input.assignments) {
      const mine = await ownPolicy(tx, actor, databaseId);
      await assignAll(tx, orgId, policy, input.assignments);
      await keptOwn(tx, actor, databaseId, mine);
    }
    const created = await view(tx, policy);
    await auditPolicy(tx, actor, origin, 'policy.created', null, created);
    return created;
  });
}

/** A change of name, description or the whole rule list; raw input, as createPolicy. */
export async function patchPolicy(
  sql: Sql,
  { orgId, actor, origin }: Caller,
  databaseId: string,
  id: string,
  raw: unknown,
): Promise<PolicyView> {
  const input = parseInput(PatchPolicy, raw);
  await mustFindDatabase(sql, orgId, databaseId);
  await mustFindPolicy(sql, databaseId, id);
  if (input.rules) checkUniqueRules(input.rules);
  return sql.begin(async (tx) => {
    const before = await view(tx, await mustFindPolicy(tx, databaseId, id));
    const policy = await updatePolicy(tx, id, { name: input.name, description: input.description }).catch(
      onDuplicateName,
    );
    if (input.rules) {
      await notOwn(tx, actor, databaseId, id);
      await replaceRules(tx, id, input.rules.map(toRuleRow));
    }
    const after = await view(tx, policy);
    await auditPolicy(tx, actor, origin, 'policy.updated', before, after);
    return after;
  });
}

export async function deletePolicy(
  sql: Sql,
  { orgId, actor, origin }: Caller,
  databaseId: string,
  id: string,
): Promise<PolicyView> {
  await mustFindDatabase(sql, orgId, databaseId);
  return sql.begin(async (tx) => {
    const existing = await view(tx, await mustFindPolicy(tx, databaseId, id));
    await notOwn(tx, actor, databaseId, id);
    await deletePolicyRow(tx, id);
    await auditPolicy(tx, actor, origin, 'policy.deleted', existing, null);
    return existing;
  });
}

/**
 * Replaces who the policy is assigned to. A user or role that had another policy on this
 * database moves to this one (one policy per user and per role on a database).
 */
export async function setAssignments(
  sql: Sql,
  { orgId, actor, origin }: Caller,
  databaseId: string,
  id: string,
  raw: unknown,
): Promise<PolicyView> {
  const input = parseInput(PutAssignments, raw);
  await mustFindDatabase(sql, orgId, databaseId);
  const policy = await mustFindPolicy(sql, databaseId, id);
  return sql.begin(async (tx) => {
    const before = await view(tx, policy);
    const mine = await ownPolicy(tx, actor, databaseId);
    await tx`delete from data_protection_assignments where policy_id = ${id}`;
    await assignAll(tx, orgId, policy, input);
    await keptOwn(tx, actor, databaseId, mine);
    const after = await view(tx, policy);
    await auditPolicy(tx, actor, origin, 'policy.assigned', before, after);
    return after;
  });
}

// docs/security.md (Admin): no one escapes their own data-protection policy. The policy that
// applies to the caller is not changed or deleted by them, nor moved off them by assignments
// (to another policy or to none); another admin makes such a change. Taking one on is allowed.
const OWN = 'this data-protection policy applies to you: another admin must change it';

async function ownPolicy(tx: Tx, actor: QueryActor, databaseId: string): Promise<string | null> {
  if (actor.kind !== 'user') return null;
  return (await applicablePolicy(tx, databaseId, actor.userId, actor.role))?.policy.id ?? null;
}

async function notOwn(tx: Tx, actor: QueryActor, databaseId: string, id: string): Promise<void> {
  if ((await ownPolicy(tx, actor, databaseId)) === id) throw forbidden(OWN);
}

async function keptOwn(tx: Tx, actor: QueryActor, databaseId: string, before: string | null): Promise<void> {
  if (before !== null && (await ownPolicy(tx, actor, databaseId)) !== before)
    throw forbidden(`${OWN}; these assignments would move you off it`);
}

async function assignAll(sql: Tx, orgId: string, policy: PolicyRow, input: AssignmentsInput) {
  for (const [i, userId] of input.users.entries()) {
    const user = await findUserById(sql, userId);
    if (!user || user.org_id !== orgId)
      throw validationFailed([{ path: `users.${i}`, message: 'no such user' }]);
    await assignPolicy(sql, { policyId: policy.id, databaseId: policy.database_id, userId, role: null });
  }
  for (const role of new Set<Role>(input.roles)) {
    await assignPolicy(sql, { policyId: policy.id, databaseId: policy.database_id, userId: null, role });
  }
}

async function view(sql: Tx, policy: PolicyRow): Promise<PolicyView> {
  const [rules, assignments] = [await listRules(sql, [policy.id]), await listAssignments(sql, [policy.id])];
  return { policy, rules: rules.get(policy.id) ?? [], assignments };
}

function toRuleRow(r: v.InferOutput<typeof Rule>): RuleRow {
  const partial = r.action === 'partial';
  return {
    schema_name: r.schema,
    table_name: r.table,
    column_name: r.column,
    action: r.action,
    keep_first: partial ? r.keep_first : 0,
    keep_last: partial ? r.keep_last : 0,
  };
}

function checkUniqueRules(rules: v.InferOutput<typeof Rule>[]): void {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    const key = JSON.stringify([r.schema, r.table, r.column]);
    if (seen.has(key))
      throw validationFailed([{ path: `rules.${i}`, message: 'a rule for this column is already listed' }]);
    seen.add(key);
  });
}

/** The policy as an auditor compares it: one entry per rule, keyed by the column it protects. */
function policySnapshot(v: PolicyView, part: 'policy' | 'assignments'): Record<string, unknown> {
  if (part === 'assignments')
    return {
      users: v.assignments.flatMap((a) => (a.user_id ? [a.user_id] : [])).sort(),
      roles: v.assignments.flatMap((a) => (a.role ? [a.role] : [])).sort(),
    };
  const out: Record<string, unknown> = { name: v.policy.name, description: v.policy.description };
  for (const r of v.rules)
    out[`rule ${r.schema_name ? `${r.schema_name}.` : ''}${r.table_name}.${r.column_name}`] =
      r.action === 'partial'
        ? { action: r.action, keep_first: r.keep_first, keep_last: r.keep_last }
        : { action: r.action };
  return out;
}

/** One event per change, in the change's transaction; an update that changed nothing records none. */
async function auditPolicy(
  tx: Tx,
  actor: QueryActor,
  origin: QueryOrigin,
  event: 'policy.created' | 'policy.updated' | 'policy.deleted' | 'policy.assigned',
  before: PolicyView | null,
  after: PolicyView | null,
): Promise<void> {
  const part = event === 'policy.assigned' ? 'assignments' : 'policy';
  const change = changeOf(before && policySnapshot(before, part), after && policySnapshot(after, part));
  if (isEmptyChange(change)) return;
  const p = (after ?? before)!.policy;
  const changed = Object.keys(change.after ?? change.before ?? {});
  await recordEvent(tx, {
    orgId: p.org_id,
    actor,
    origin,
    event,
    subject: { database_id: p.database_id, policy_id: p.id, ...change },
    databaseId: p.database_id,
    outcome: 'allowed',
    detail:
      event === 'policy.created'
        ? `created policy ${p.name}`
        : event === 'policy.deleted'
          ? `deleted policy ${p.name}`
          : `${p.name}: ${changed.join(', ')}`,
  });
}

async function mustFindDatabase(sql: Sql, orgId: string, databaseId: string): Promise<void> {
  if (!(await findDatabase(sql, orgId, databaseId))) throw notFound('no such database');
}

async function mustFindPolicy(sql: Tx, databaseId: string, id: string): Promise<PolicyRow> {
  const policy = await findPolicy(sql, databaseId, id);
  if (!policy) throw notFound('no such policy');
  return policy;
}

function onDuplicateName(err: unknown): never {
  if ((err as { code?: string }).code === '23505')
    throw conflict('a policy with this name exists on this database');
  throw err;
}
