// "Show me what this person sees of this table": sample rows of one table, computed by running
// `select * … limit 20` through the governed pipeline AS that person — their access to the
// database, their credential grants, their data-protection policy, the credential's review rule —
// so the preview cannot disagree with what the person's own queries return. An admin's action,
// recorded as `policy.previewed` beside the pipeline's own entry for the query it ran.
import * as v from 'valibot';
import type { AdapterName, QueryResult, SchemaTable } from '../adapters/types.ts';
import { actorIsAdmin, type Caller } from '../audit/actors.ts';
import { recordEvent } from '../audit/events.ts';
import { AppError, forbidden, validationFailed } from '../core/errors.ts';
import { runGovernedQuery } from '../governance/query.ts';
import type { GovernanceDeps } from '../governance/types.ts';
import { getDatabase } from '../registry/databases.ts';
import { findUserById } from '../store/users.ts';
import { type PolicyPreview, previewPolicy, previewTables } from './policy-preview.ts';
import type { ColumnMark } from './schema.ts';

/** Rows the preview shows: enough to judge the masks, few enough to read. */
export const PREVIEW_ROWS = 20;

export type RowsPreview =
  | {
      status: 'rows';
      result: QueryResult;
      /** Per result column, what the person's policy does to it (null: shown as it is). */
      marks: Array<ColumnMark | null>;
      policy: { id: string; name: string } | null;
    }
  /** The person's query was refused or failed: the reason the pipeline gave, as they would read it. */
  | { status: 'refused'; reason: string };

const MARK: Record<string, ColumnMark | null> = {
  shown: null,
  hidden: 'hide',
  masked: 'mask',
  hashed: 'hash',
  partial: 'partial',
};

/** One identifier quoted the way its engine reads it (embedded quotes doubled). */
function quoted(adapter: AdapterName, name: string): string {
  if (adapter === 'mysql' || adapter === 'clickhouse') return `\`${name.replaceAll('`', '``')}\``;
  if (adapter === 'sqlserver') return `[${name.replaceAll(']', ']]')}]`;
  return `"${name.replaceAll('"', '""')}"`;
}

/** The statement a person would type to look at the first rows of a table, in the engine's dialect. */
export function sampleStatement(adapter: AdapterName, table: { schema: string; name: string }): string {
  const from = `${table.schema ? `${quoted(adapter, table.schema)}.` : ''}${quoted(adapter, table.name)}`;
  if (adapter === 'sqlserver') return `select top ${PREVIEW_ROWS} * from ${from}`;
  if (adapter === 'oracle') return `select * from ${from} fetch first ${PREVIEW_ROWS} rows only`;
  return `select * from ${from} limit ${PREVIEW_ROWS}`;
}

export async function previewRowsAs(
  deps: GovernanceDeps,
  caller: Caller,
  input: { databaseId: string; userId: string; table: string },
): Promise<RowsPreview> {
  if (!actorIsAdmin(caller.actor)) throw forbidden('only admins preview what another person sees');
  // The admin must see the database themselves: a preview is no way into a restricted one.
  const { db, credentials } = await getDatabase(deps.sql, caller, input.databaseId);
  const person = await findUserById(deps.sql, input.userId);
  if (!person || person.org_id !== caller.orgId || person.deleted_at)
    throw validationFailed([{ path: 'user_id', message: 'no such person in this organization' }]);
  // Only a table the database has (as its default credential reads the schema) is named in SQL.
  const home = credentials.find((c) => c.default_credential) ?? credentials[0];
  const tables = home ? await previewTables(deps, db, home) : [];
  const found = tables.find((t) => `${t.schema}.${t.name}` === input.table);
  if (!found) throw validationFailed([{ path: 'table', message: `no table ${input.table} in ${db.name}` }]);
  const table: SchemaTable = found;
  const actor = { kind: 'user' as const, userId: person.id, role: person.role };
  const statement = sampleStatement(db.adapter, table);
  let out: RowsPreview;
  let auditId: string | null = null;
  if (person.disabled_at) out = { status: 'refused', reason: 'this person is disabled and cannot sign in' };
  else {
    try {
      const ran = await runGovernedQuery(deps, {
        orgId: caller.orgId,
        actor,
        origin: 'user',
        databaseId: db.id,
        statement,
        params: [],
        maxRows: PREVIEW_ROWS,
        readOnly: true,
      });
      auditId = ran.auditId ?? null;
      const cred = credentials.find((c) => c.id === ran.credentialId) ?? credentials[0];
      const described: PolicyPreview | null = cred
        ? await previewPolicy(deps, { orgId: caller.orgId, db, cred, person: actor, table })
        : null;
      const byName = new Map((described?.columns ?? []).map((c) => [c.name, MARK[c.treatment] ?? null]));
      out = {
        status: 'rows',
        result: ran.result,
        marks: ran.result.columns.map((c) => byName.get(c) ?? null),
        policy: described?.policy ?? null,
      };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      out = {
        status: 'refused',
        reason:
          err.status === 404 ? `${person.email} has no access to ${db.name} (${err.detail})` : err.detail,
      };
    }
  }
  const name = `${table.schema}.${table.name}`;
  await recordEvent(deps.sql, {
    orgId: caller.orgId,
    actor: caller.actor,
    origin: caller.origin,
    event: 'policy.previewed',
    databaseId: db.id,
    subject: {
      database_id: db.id,
      user_id: person.id,
      table: name,
      rows: out.status === 'rows' ? out.result.rows.length : null,
      query_audit_id: auditId,
    },
    outcome: out.status === 'rows' ? 'allowed' : 'denied',
    detail:
      out.status === 'rows'
        ? `previewed ${name} as ${person.email}: ${out.result.rows.length} row(s)`
        : `previewed ${name} as ${person.email}: refused (${out.reason})`,
  });
  return out;
}

/** The REST body: whom to preview as, and which table ("schema.table" as the schema lists it). */
export const PreviewAs = v.object({
  user_id: v.pipe(v.string(), v.minLength(1, 'user_id is required')),
  table: v.pipe(v.string(), v.minLength(1, 'table is required'), v.maxLength(400)),
});
