// Data protection, DESIGN.md pipeline step 5: the statement is rewritten so protected
// columns are masked wherever they appear, or refused when it cannot be analyzed; the result is
// then checked against the columns' sources where the engine reports them (second line).
import type { ParamValue, QueryResult } from '../../adapters/types.ts';
import type { PoolSource } from '../../core/deps.ts';
import type { Logger } from '../../core/logger.ts';
import { type DbSchema, readDbSchema, SchemaCache } from '../../sql/catalog.ts';
import { cachedAccessRead } from '../../store/access-cache.ts';
import type { Keyring } from '../../store/crypto.ts';
import {
  applicablePolicy,
  findPolicy,
  listRules,
  type PolicyRow,
  type PolicyWithRules,
} from '../../store/data-protection.ts';
import type { CredentialRow, DatabaseRow } from '../../store/databases.ts';
import type { Tx } from '../../store/db.ts';
import { poolFor, poolVersion } from '../connections.ts';
import type { GoverningPolicy, QueryActor } from '../types.ts';
import { rewriteMysql } from './mysql.ts';
import { rewritePostgres } from './postgres.ts';
import { MASK, ProtectionRefusedError, RuleBook, UnknownObjectError } from './rules.ts';
import { scrubError, scrubResult } from './scrub.ts';

export { ProtectionParseError, ProtectionRefusedError, ServerStyleError } from './rules.ts';

export interface ProtectionDeps {
  sql: Tx;
  pools: PoolSource;
  keyring: Keyring;
  logger: Logger;
}

export interface ProtectionInput {
  orgId: string;
  db: DatabaseRow;
  cred: CredentialRow;
  actor: QueryActor;
  /** The applicable policy's id as the access statement found it (null: none); undefined: look it up. */
  policyId?: string | null | undefined;
  statement: string;
  params: ParamValue[];
  /** An undo's inverse, bound to the rows its write kept (RuleBook.restoresKeptRows). */
  restoresKeptRows?: boolean;
}

/** What the pipeline runs, and how it redacts what comes back. */
export interface ProtectionPlan {
  statement: string;
  params: ParamValue[];
  /** The policy that applied, or null when none does (the statement is then unchanged). */
  applied: (GoverningPolicy & { rewritten: boolean }) | null;
  /** Second line of defence on the result (fail closed where the source cannot be established). */
  redact(result: QueryResult): QueryResult;
  /**
   * The error to report when the server refused the planned statement: its message may quote
   * the rewritten statement (MariaDB reprints expressions), which is taken out (scrub.ts).
   */
  failure(err: unknown): unknown;
}

const schemas = new SchemaCache();
const identity = (r: QueryResult) => r;
const same = (err: unknown) => err;

/**
 * Plans a statement under the actor's data-protection policy on `db`. Without an
 * applicable policy the statement passes unchanged after one indexed lookup. Throws
 * ProtectionRefusedError (403) or ProtectionParseError (422) to refuse.
 */
export async function planProtection(deps: ProtectionDeps, input: ProtectionInput): Promise<ProtectionPlan> {
  const found = await applicable(deps.sql, input);
  if (!found)
    return {
      statement: input.statement,
      params: input.params,
      applied: null,
      redact: identity,
      failure: same,
    };
  const { db } = input;
  if (db.adapter !== 'postgres' && db.adapter !== 'mysql') {
    // README "What each engine gets": no parser we trust for these dialects, so fail closed.
    throw new ProtectionRefusedError(
      `policy ${found.policy.name} applies to you on ${db.name}, and ${db.adapter} queries cannot be analyzed, so none may run`,
    );
  }
  const rules = new RuleBook(
    found.policy.id,
    found.policy.hash_salt,
    found.rules,
    db.adapter === 'mysql',
    input.restoresKeptRows === true,
  );
  const rewrite = async (schema: DbSchema) =>
    db.adapter === 'postgres'
      ? rewritePostgres(input.statement, schema, rules)
      : rewriteMysql(input.statement, schema, rules);
  let schema = await schemaOf(deps, db, input.cred, false);
  let statement: string;
  try {
    statement = await rewrite(schema);
  } catch (err) {
    if (!(err instanceof UnknownObjectError)) throw err;
    // The schema may have changed since it was cached: read it again once, then decide.
    schema = await schemaOf(deps, db, input.cred, true);
    statement = await rewrite(schema);
  }
  deps.logger.debug(
    { databaseId: db.id, policyId: found.policy.id },
    'statement rewritten for data protection',
  );
  return {
    statement,
    params: input.params,
    applied: { ...governing(found.policy), rewritten: statement !== input.statement },
    redact: (r) =>
      withHiddenNote(
        scrubResult(db.adapter === 'postgres' ? redactBySource(r, schema, rules) : r, rules.salt),
        found.policy.name,
        rules,
      ),
    failure: (err) => scrubError(err, rules.salt),
  };
}

/** One row per protected table column, for the AI tool `get_data_protection`. */
export interface ProtectionDescription {
  policy: { id: string; name: string; description: string } | null;
  /** Columns the policy does not show, with what it does to each; empty without a policy. */
  columns: Array<{
    schema: string;
    table: string;
    column: string;
    action: string;
    keep_first?: number;
    keep_last?: number;
    /** Hidden only because no rule names the column (default deny). */
    by_default?: boolean;
  }>;
  /** What is refused under the policy, in words, when one applies. */
  notes: string[];
}

/** What the actor's policy hides on a database (the AI tool `get_data_protection`). */
export async function describeProtection(
  deps: ProtectionDeps,
  input: Omit<ProtectionInput, 'statement' | 'params'>,
): Promise<ProtectionDescription> {
  const found = await applicable(deps.sql, input);
  if (!found) return { policy: null, columns: [], notes: [] };
  const { policy } = found;
  const head = { id: policy.id, name: policy.name, description: policy.description };
  if (input.db.adapter !== 'postgres' && input.db.adapter !== 'mysql') {
    return {
      policy: head,
      columns: [],
      notes: [`${input.db.adapter} queries are refused while this policy applies`],
    };
  }
  const rules = new RuleBook(policy.id, policy.hash_salt, found.rules, input.db.adapter === 'mysql');
  const schema = await schemaOf(deps, input.db, input.cred, false);
  const columns: ProtectionDescription['columns'] = [];
  for (const rel of schema.relations) {
    for (const col of rel.columns) {
      const t = rules.treatment(rel.schema, rel.name, col.name);
      if (t.action === 'show') continue;
      const row = {
        schema: rel.schema,
        table: rel.name,
        column: col.name,
        action: t.action,
        ...(RuleBook.isDefault(t) ? { by_default: true } : {}),
      };
      columns.push(t.action === 'partial' ? { ...row, keep_first: t.keepFirst, keep_last: t.keepLast } : row);
    }
  }
  return { policy: head, columns, notes: REFUSED_NOTES };
}

const REFUSED_NOTES = [
  'SELECT runs masked; INSERT, UPDATE, DELETE, MERGE, REPLACE and table DDL run only when no clause reads a protected column (assigning a literal or parameter to one is allowed); COPY, DO, CALL, PREPARE/EXECUTE, cursors and EXPLAIN are refused',
  'whole-row references (row_to_json(t), to_jsonb(t), t.*) inside expressions and system catalogs are refused',
  'built-in functions run on the masked values; user-defined functions, dynamic SQL, file access, sleeping, settings and catalog functions are refused',
  'a masked column reads as the mask everywhere, including WHERE, JOIN, GROUP BY and ORDER BY',
];

/** The policy that applies to the actor on the database, with its rules; null when none does. */
async function applicable(
  sql: Tx,
  input: Pick<ProtectionInput, 'db' | 'actor' | 'policyId'>,
): Promise<PolicyWithRules | null> {
  // Most queries have no policy: the access statement said so already, without a query of its own.
  if (input.policyId === null) return null;
  if (input.policyId === undefined) return policyFor(sql, input.db.id, input.actor);
  // Gone since the access statement read it: ask again rather than run unprotected.
  return (
    (await policyWithRules(sql, input.db.id, input.policyId)) ??
    (await policyFor(sql, input.db.id, input.actor))
  );
}

/**
 * The policy that applies to `actor` on a database now, as a statement planned now would run
 * under it; null when none does. Run outputs compare it with the policy their rows were
 * computed under (run-output.ts).
 */
export async function currentPolicy(
  sql: Tx,
  databaseId: string,
  actor: QueryActor,
): Promise<GoverningPolicy | null> {
  const found = await policyFor(sql, databaseId, actor);
  return found ? governing(found.policy) : null;
}

function governing(policy: PolicyRow): GoverningPolicy {
  return { policyId: policy.id, version: policy.updated_at.toISOString() };
}

async function policyWithRules(
  sql: Tx,
  databaseId: string,
  policyId: string,
): Promise<PolicyWithRules | null> {
  // Policies and rules notify store/access-cache.ts when they change.
  return cachedAccessRead(sql, `policy:${databaseId}:${policyId}`, async () => {
    const policy = await findPolicy(sql, databaseId, policyId);
    if (!policy) return null;
    return { policy, rules: (await listRules(sql, [policy.id])).get(policy.id) ?? [] };
  });
}

async function policyFor(sql: Tx, databaseId: string, actor: QueryActor): Promise<PolicyWithRules | null> {
  // Policies are assigned to people and roles; organization API keys and workflow runs act for
  // the organization (README "Who a policy applies to").
  if (actor.kind !== 'user') return null;
  return applicablePolicy(sql, databaseId, actor.userId, actor.role);
}

function schemaOf(
  deps: ProtectionDeps,
  db: DatabaseRow,
  cred: CredentialRow,
  fresh: boolean,
): Promise<DbSchema> {
  const version = poolVersion(db, cred);
  const pool = poolFor(deps, db, cred);
  const dialect = db.adapter === 'postgres' ? 'postgres' : 'mysql';
  return schemas.get(`${cred.id}|${version}`, () => readDbSchema(pool, dialect), fresh);
}

/**
 * Postgres reports the table and column of each result field. A field from a column the
 * policy does not show, or from a relation the schema does not know, is redacted: the
 * rewriter should have replaced it, so its presence means something got past (fail closed).
 * Fields without a source are expressions the rewriter produced from masked inputs.
 */
export function redactBySource(result: QueryResult, schema: DbSchema, rules: RuleBook): QueryResult {
  const sources = result.columnSources;
  if (!sources) return result;
  const redacted = sources.map((src) => {
    if (!src) return null;
    const rel = schema.byOid.get(src.tableOid);
    const col = rel?.columns.find((c) => c.number === src.columnNumber);
    if (!rel || !col) return MASK;
    const t = rules.treatment(rel.schema, rel.name, col.name);
    return t.action === 'show' ? null : t.action === 'hide' ? 'null' : MASK;
  });
  if (redacted.every((r) => r === null)) return result;
  const rows = result.rows.map((row) =>
    row.map((v, i) => (redacted[i] === null ? v : redacted[i] === 'null' ? null : MASK)),
  );
  return { ...result, rows };
}

/**
 * A column no rule names reads as NULL under the policy (default deny); the result says
 * which ones, so a person sees "hidden" rather than silently empty data.
 */
function withHiddenNote(result: QueryResult, policyName: string, rules: RuleBook): QueryResult {
  if (rules.hiddenByDefault.size === 0) return result;
  const names = [...rules.hiddenByDefault].slice(0, 20).join(', ');
  const more = rules.hiddenByDefault.size > 20 ? ` and ${rules.hiddenByDefault.size - 20} more` : '';
  const note = `data protection: policy "${policyName}" names no rule for ${names}${more}, so they read as NULL`;
  return { ...result, messages: [...result.messages, note] };
}
