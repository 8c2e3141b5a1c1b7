// The schema a person works against in the query console: the tables and columns their
// credential reads, each column marked with what their data-protection policy does to it, so the
// editor completes and the browser shows only names the person may use, with the protected ones
// labelled. Read through the same access rules as a query (governance/access.ts resolveTarget):
// a database or credential the person may not use is a 404, as everywhere else.
import type { SchemaTable } from '../adapters/types.ts';
import { resolveTarget } from '../governance/access.ts';
import { readTargetSchema } from '../governance/ai-access.ts';
import { describeProtection } from '../governance/protection/index.ts';
import type { GovernanceDeps, QueryActor } from '../governance/types.ts';

/** What the policy does to a column; absent when it shows it. */
export type ColumnMark = 'mask' | 'partial' | 'hash' | 'hide';

export interface PersonSchema {
  database_id: string;
  credential_id: string;
  adapter: string;
  policy: string | null;
  tables: Array<{
    schema: string;
    name: string;
    kind: 'table' | 'view';
    columns: Array<{ name: string; type: string; nullable: boolean; protection?: ColumnMark }>;
  }>;
}

export async function personSchema(
  deps: GovernanceDeps,
  q: { orgId: string; actor: QueryActor; databaseId: string; credentialId?: string | undefined },
): Promise<PersonSchema> {
  const { db, cred } = await resolveTarget(deps.sql, q);
  const [tables, described] = await Promise.all([
    readTargetSchema(deps, db, cred),
    describeProtection(deps, { orgId: q.orgId, db, cred, actor: q.actor }),
  ]);
  const marks = new Map(described.columns.map((c) => [key(c.schema, c.table, c.column), c.action]));
  return {
    database_id: db.id,
    credential_id: cred.id,
    adapter: db.adapter,
    policy: described.policy?.name ?? null,
    tables: tables.map((t: SchemaTable) => ({
      schema: t.schema,
      name: t.name,
      kind: t.kind,
      columns: t.columns.map((c) => {
        const mark = marks.get(key(t.schema, t.name, c.name)) as ColumnMark | undefined;
        return { name: c.name, type: c.type, nullable: c.nullable, ...(mark ? { protection: mark } : {}) };
      }),
    })),
  };
}

const key = (schema: string, table: string, column: string) => `${schema}\u0000${table}\u0000${column}`;
