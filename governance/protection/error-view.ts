// Who may read a failed query's error. A database quotes values in its errors (`invalid input
// syntax for type integer: "SSN-000011"`, `cannot compare text "…"`), computed under the policy
// of whoever the query ran as. Another reader whose own policy hides those values gets a generic
// message instead; the detail stays for those allowed to see it: the person it ran as, readers
// without a policy on that database, readers under the very same policy, and the organization's
// own keys (which see every value anyway, as they do run outputs: run-output.ts).
import { applicablePolicy } from '../../store/data-protection.ts';
import type { Tx } from '../../store/db.ts';
import { findUserById } from '../../store/users.ts';
import type { QueryActor } from '../types.ts';

/** Why `reader` may not read errors of queries run as `ranAs` on `databaseId`; null when they may. */
export async function errorRefusal(
  sql: Tx,
  databaseId: string,
  reader: QueryActor,
  ranAs: { userId: string } | null,
): Promise<string | null> {
  if (reader.kind !== 'user') return null;
  if (ranAs && reader.userId === ranAs.userId) return null;
  const mine = await applicablePolicy(sql, databaseId, reader.userId, reader.role);
  // Without a policy of their own the reader could read every value of that database anyway.
  if (!mine) return null;
  const author = ranAs ? await findUserById(sql, ranAs.userId) : null;
  // A query run as the organization (no person) ran under no policy.
  const theirs = author ? await applicablePolicy(sql, databaseId, author.id, author.role) : null;
  if (
    theirs &&
    theirs.policy.id === mine.policy.id &&
    sameTime(theirs.policy.updated_at, mine.policy.updated_at)
  )
    return null;
  return `data-protection policy ${mine.policy.id} applies to you on this database and the query ran under ${theirs ? `policy ${theirs.policy.id}` : 'none'}`;
}

/** The message shown instead of an error `reader` may not read. */
export function hiddenError(why: string): string {
  return `the error is hidden because it may quote values: ${why}; the person it ran as can read it`;
}

function sameTime(a: Date, b: Date): boolean {
  return a.getTime() === b.getTime();
}
