// What a reader is shown of the audit log. A failed query's error may quote values the database
// read under the policy of whoever ran it (`invalid input syntax for type integer: "SSN-000011"`);
// the log shows it only to readers allowed to read it (protection/error-view.ts): the person it
// ran as, readers with no policy on that database, readers under the very same policy. Others
// read the generic message instead, in the listing, the page and the exports alike. The stored
// entry keeps its detail: the hash chain covers it.
import type { AuditRow } from '../store/audit.ts';
import type { Tx } from '../store/db.ts';
import { errorRefusal, hiddenError } from './protection/error-view.ts';
import type { QueryActor } from './types.ts';

/** Shows entries as `reader` may read them; one verdict per database and person it ran as. */
export function auditViewer(sql: Tx, reader: QueryActor): (e: AuditRow) => Promise<AuditRow> {
  const verdicts = new Map<string, Promise<string | null>>();
  return async (e) => {
    if (e.event !== 'query' || e.outcome !== 'failed' || e.detail === null || e.database_id === null)
      return e;
    const key = `${e.database_id}\u0000${e.actor_user_id ?? ''}`;
    let why = verdicts.get(key);
    if (!why) {
      // An entry with no person ran as the organization, under no policy.
      why = errorRefusal(sql, e.database_id, reader, e.actor_user_id ? { userId: e.actor_user_id } : null);
      verdicts.set(key, why);
    }
    const refusal = await why;
    return refusal === null ? e : { ...e, detail: hiddenError(refusal) };
  };
}

/** The entries as `reader` may read them, in order. */
export async function shownTo(sql: Tx, reader: QueryActor, rows: readonly AuditRow[]): Promise<AuditRow[]> {
  const show = auditViewer(sql, reader);
  const out: AuditRow[] = [];
  for (const row of rows) out.push(await show(row));
  return out;
}
