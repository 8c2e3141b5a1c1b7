// "What does this person see of this table?" for the policies page: each column of
// the table as the person's data-protection policy treats it, computed by the same code that
// rewrites their queries (describeProtection), and whether a column is hidden only because no
// rule names it (default deny). Nothing here leaves the service that a query would not show:
// no salt, no rewritten SQL.
import type { SchemaTable } from '../adapters/types.ts';
import { poolFor } from '../governance/connections.ts';
import { describeProtection, type ProtectionDeps } from '../governance/protection/index.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';
import type { Role } from '../store/users.ts';

export type Treatment = 'shown' | 'hidden' | 'masked' | 'hashed' | 'partial';

export interface PreviewColumn {
  name: string;
  type: string;
  treatment: Treatment;
  /** Hidden because no rule names the column or its table's `*`: the policy's default. */
  byDefault: boolean;
  keepFirst?: number;
  keepLast?: number;
}

export interface PolicyPreview {
  policy: { id: string; name: string } | null;
  table: { schema: string; name: string };
  columns: PreviewColumn[];
}

const WORD: Record<string, Treatment> = {
  hide: 'hidden',
  mask: 'masked',
  hash: 'hashed',
  partial: 'partial',
};

/** The tables the credential sees (the preview's table picker). */
export async function previewTables(
  deps: ProtectionDeps,
  db: DatabaseRow,
  cred: CredentialRow,
): Promise<SchemaTable[]> {
  return poolFor(deps, db, cred).readSchema();
}

export async function previewPolicy(
  deps: ProtectionDeps,
  input: {
    orgId: string;
    db: DatabaseRow;
    cred: CredentialRow;
    person: { userId: string; role: Role };
    table: SchemaTable;
  },
): Promise<PolicyPreview> {
  const actor = { kind: 'user' as const, userId: input.person.userId, role: input.person.role };
  const described = await describeProtection(deps, {
    orgId: input.orgId,
    db: input.db,
    cred: input.cred,
    actor,
  });
  const t = input.table;
  const base = {
    policy: described.policy && { id: described.policy.id, name: described.policy.name },
    table: { schema: t.schema, name: t.name },
  };
  if (!described.policy)
    return {
      ...base,
      columns: t.columns.map((c) => ({ name: c.name, type: c.type, treatment: 'shown', byDefault: false })),
    };
  const same = (a: string, b: string) =>
    input.db.adapter === 'mysql' ? a.toLowerCase() === b.toLowerCase() : a === b;
  return {
    ...base,
    columns: t.columns.map((c) => {
      const d = described.columns.find(
        (x) => same(x.schema, t.schema) && same(x.table, t.name) && same(x.column, c.name),
      );
      if (!d) return { name: c.name, type: c.type, treatment: 'shown', byDefault: false };
      return {
        name: c.name,
        type: c.type,
        treatment: WORD[d.action] ?? 'hidden',
        byDefault: d.by_default === true,
        ...(d.keep_first !== undefined ? { keepFirst: d.keep_first } : {}),
        ...(d.keep_last !== undefined ? { keepLast: d.keep_last } : {}),
      };
    }),
  };
}
