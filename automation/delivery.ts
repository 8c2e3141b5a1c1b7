// Whether a workflow's write steps run exactly once on a database (governance/once.ts): two-phase
// commit on the target (PostgreSQL with max_prepared_transactions > 0, MySQL/MariaDB XA) makes a
// retried attempt settle the earlier one's write instead of running it again. The editor and the
// run page say where writes run at least once instead.
import type { PoolSource } from '../core/deps.ts';
import { poolFor } from '../governance/connections.ts';
import type { Keyring } from '../store/crypto.ts';
import { type CredentialRow, type DatabaseRow, findCredentialAndDatabase } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { StepDefinition } from '../workflows/types.ts';

export type WriteDelivery = 'exactly_once' | 'at_least_once' | 'unknown';

/** A page does not wait longer than this for a target to answer (the answer is cached per pool). */
const PROBE_MS = 1000;

export const AT_LEAST_ONCE_NOTE =
  'Writes on this database run at least once: it has no two-phase commit (PostgreSQL needs max_prepared_transactions > 0), so a retried attempt may repeat a write that committed.';

export async function writeDelivery(
  deps: { pools: PoolSource; keyring: Keyring },
  db: DatabaseRow,
  cred: CredentialRow,
): Promise<WriteDelivery> {
  const sessions = poolFor(deps, db, cred).sessions;
  // Engines without it, and databases reached through an agent's tunnel.
  if (!sessions) return 'at_least_once';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'unknown'>((resolve) => {
    timer = setTimeout(() => resolve('unknown'), PROBE_MS);
  });
  const probe = sessions.twoPhase().then(
    (yes): WriteDelivery => (yes ? 'exactly_once' : 'at_least_once'),
    (): WriteDelivery => 'unknown',
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** For each query step of a workflow whose writes run at least once, the note the run page shows. */
export async function deliveryNotes(
  deps: { sql: Tx; pools: PoolSource; keyring: Keyring },
  orgId: string,
  steps: readonly StepDefinition[],
): Promise<Record<string, string>> {
  const notes: Record<string, string> = {};
  for (const step of steps) {
    if (step.action.__type__ !== 'query') continue;
    const target = await findCredentialAndDatabase(deps.sql, orgId, step.action.credential_id);
    if (target && (await writeDelivery(deps, target.db, target.cred)) === 'at_least_once')
      notes[step.id] = AT_LEAST_ONCE_NOTE;
  }
  return notes;
}
