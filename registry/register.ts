// Registration as the web UI does it: the secure defaults of the form (restricted, reviewed) are
// the form's business; this checks every credential first and keeps the registrant able to see
// what they registered. The REST API calls createDatabase directly and keeps SPEC.md's defaults.
import type { Caller } from '../audit/actors.ts';
import { recordEvent } from '../audit/events.ts';
import { insertGrant } from '../store/grants.ts';
import { newId } from '../store/ids.ts';
import type { AgentTunnels } from '../tunnels/hub.ts';
import { checkNewConnections, type FailedCheck } from './check-connection.ts';
import type { CreateDatabaseInput } from './database-input.ts';
import { createDatabase, type DatabaseDeps, type DatabaseWithCredentials } from './databases.ts';

export type Registration =
  | { saved: true; value: DatabaseWithCredentials }
  | { saved: false; failures: FailedCheck[] };

/**
 * Saves the database only when every credential connects, unless `saveAnyway` (an explicit
 * choice on the form: e.g. a database that is not reachable yet). A restricted database is
 * granted to the person registering it, who would otherwise lose sight of it at once (SPEC.md
 * 2.2: restricted databases are visible to super admins and granted people only).
 */
export async function registerDatabase(
  deps: DatabaseDeps & { agents?: AgentTunnels },
  caller: Caller,
  input: CreateDatabaseInput,
  options: { saveAnyway: boolean },
): Promise<Registration> {
  const { orgId, actor } = caller;
  if (!options.saveAnyway) {
    const failures = await checkNewConnections(deps, input);
    if (failures.length > 0) return { saved: false, failures };
  }
  const value = await createDatabase(deps, caller, input);
  if (value.db.restrict_access && actor.kind === 'user' && actor.role !== 'super_admin') {
    const { userId } = actor;
    await deps.sql.begin(async (tx) => {
      const out = await insertGrant(tx, {
        id: newId('grt'),
        databaseId: value.db.id,
        userId,
        grantedBy: userId,
      });
      if (out.created)
        await recordEvent(tx, {
          orgId,
          actor,
          origin: caller.origin,
          event: 'database.grant_added',
          subject: { database_id: value.db.id, grant_id: out.grant.id, user_id: userId },
          databaseId: value.db.id,
          outcome: 'allowed',
          detail: `the registrant may use ${value.db.name}, which they registered restricted`,
        });
    });
  }
  return { saved: true, value };
}
