// Registration as the web UI does it: the secure defaults of the form (restricted, reviewed) are
// the form's business; this checks every credential first and keeps the registrant able to see
// what they registered. The REST API calls createDatabase directly and keeps SPEC.md's defaults.
import type { QueryActor } from '../governance/query.ts';
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
  orgId: string,
  actor: QueryActor,
  input: CreateDatabaseInput,
  options: { saveAnyway: boolean },
): Promise<Registration> {
  if (!options.saveAnyway) {
    const failures = await checkNewConnections(deps, input);
    if (failures.length > 0) return { saved: false, failures };
  }
  const value = await createDatabase(deps, orgId, input);
  if (value.db.restrict_access && actor.kind === 'user' && actor.role !== 'super_admin')
    await insertGrant(deps.sql, {
      id: newId('grt'),
      databaseId: value.db.id,
      userId: actor.userId,
      grantedBy: actor.userId,
    });
  return { saved: true, value };
}
