// What a person's AI client may reach, and why not the rest, for the "Connect an AI client" page.
// The rules are the ones the pipeline applies (governance/ai-access.ts checkAiUse, aiDatabases):
// the database's AI switch, a credential the AI may run as (ai_allowed) that the person may use,
// the organization's limits on each AI client, and the person's access (grants).
import { usableCredentials } from '../governance/access.ts';
import { aiClientLimits } from '../governance/ai-clients.ts';
import { listConnectedClients } from '../identity/oauth-grants.ts';
import { listCredentials, listDatabases } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { Person } from './saved-queries.ts';

/** One reason the AI cannot use a database, and the page where an admin changes it. */
export interface Blocker {
  reason: string;
  fix: string;
}

export interface AiReach {
  databases: Array<{ id: string; name: string; adapter: string; blockers: Blocker[] }>;
  /** Databases of the organization this person cannot see at all (restricted, no grant). */
  restrictedCount: number;
  clients: Array<{ id: string; name: string; disabled: boolean; databaseIds: string[] | null }>;
}

export async function aiReach(sql: Tx, who: Person): Promise<AiReach> {
  const actor = { kind: 'user' as const, userId: who.userId, role: who.role };
  const visibleTo = who.role === 'super_admin' ? null : who.userId;
  const [visible, all, connected] = await Promise.all([
    listDatabases(sql, who.orgId, { limit: 1000, visibleTo }),
    listDatabases(sql, who.orgId, { limit: 1000, visibleTo: null }),
    listConnectedClients(sql, who.userId),
  ]);
  const creds = await usableCredentials(
    sql,
    actor,
    await listCredentials(
      sql,
      visible.map((d) => d.id),
    ),
  );
  const seen = new Set<string>();
  const clients: AiReach['clients'] = [];
  for (const c of connected) {
    if (seen.has(c.client_id)) continue;
    seen.add(c.client_id);
    const limits = await aiClientLimits(sql, who.orgId, c.client_id);
    clients.push({
      id: c.client_id,
      name: c.client_name,
      disabled: limits.disabled,
      databaseIds: limits.databaseIds,
    });
  }
  const databases = visible.map((db) => {
    const blockers: Blocker[] = [];
    const settings = `/databases/${db.id}`;
    if (!db.ai_enabled) blockers.push({ reason: 'AI access is off for this database', fix: settings });
    const mine = creds.filter((c) => c.database_id === db.id);
    if (mine.length === 0) blockers.push({ reason: 'you may use none of its credentials', fix: settings });
    else if (!mine.some((c) => c.ai_allowed))
      blockers.push({
        reason: 'none of your credentials on it lets the AI run as it (ai_allowed)',
        fix: settings,
      });
    for (const c of clients) {
      if (c.disabled)
        blockers.push({
          reason: `your organization disabled the AI client ${c.name}`,
          fix: '/organization#ai-clients',
        });
      else if (c.databaseIds && !c.databaseIds.includes(db.id))
        blockers.push({
          reason: `your organization keeps the AI client ${c.name} to other databases`,
          fix: '/organization#ai-clients',
        });
    }
    return { id: db.id, name: db.name, adapter: db.adapter, blockers };
  });
  return { databases, restrictedCount: all.length - visible.length, clients };
}
