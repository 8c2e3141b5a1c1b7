// The data-protection policy that applies to an actor on a database, as the governed pipeline
// decides it (governance/protection/index.ts `policyFor`, which is not exported). Policies apply
// to people only; organization keys and workflow runs act for the organization.
import type { QueryActor } from '../governance/query.ts';
import { applicablePolicy } from '../store/data-protection.ts';
import type { Tx } from '../store/db.ts';

/**
 * The policy applying to `actor` on `databaseId`, or null when none does. `version` changes
 * whenever the policy does (its rules included), so an output computed under earlier rules is
 * not mistaken for one computed under the current ones.
 */
export async function policyFor(
  sql: Tx,
  databaseId: string,
  actor: QueryActor,
): Promise<{ id: string; version: string } | null> {
  if (actor.kind !== 'user') return null;
  const found = await applicablePolicy(sql, databaseId, actor.userId, actor.role);
  return found ? { id: found.policy.id, version: found.policy.updated_at.toISOString() } : null;
}
