// The SQL of undo, built from the write's own parse tree: the read that keeps the rows an UPDATE
// or DELETE touches (its FROM and WHERE; MySQL's locked FOR UPDATE, PostgreSQL's read on the write's
// REPEATABLE READ snapshot, adapters/postgres.ts), and the inverse statements that put
// them back. No value is ever written into a statement's text: the kept rows are bound as one
// parameter, a JSON document, when the inverse runs.
import type { AdapterName } from '../../adapters/types.ts';
import { isObj, nameOf, type Obj } from '../../sql/mysql-tree.ts';
import { astify, deparseSelect, loadPostgresParser, parsePostgres, sqlParser } from '../../sql/parse.ts';
import { as, type Fields, kindOf, list } from '../../sql/pg-tree.ts';

/** The table a write changes, and how to read the rows it touches. */
export type WriteTarget =
  | {
      kind: 'target';
      verb: 'UPDATE' | 'DELETE';
      schema: string | null;
      name: string;
      /** Columns the UPDATE sets. */
      assigned: string[];
      /** The read of the touched rows, keeping `columns` (keptColumns), at most `limit` rows. */
      select(columns: string[], limit: number): string;
    }
  | { kind: 'none'; reason: string };

export async function writeTarget(adapter: AdapterName, statement: string): Promise<WriteTarget> {
  try {
    if (adapter === 'postgres') return await postgresTarget(statement);
    if (adapter === 'mysql') return mysqlTarget(statement);
  } catch {
    return { kind: 'none', reason: 'the statement could not be read' };
  }
  return { kind: 'none', reason: `undo is not offered on ${adapter}` };
}

const ONLY_UPDATE_DELETE = 'undo is offered for UPDATE and DELETE only';

async function postgresTarget(statement: string): Promise<WriteTarget> {
  await loadPostgresParser();
  const stmts = parsePostgres(statement, { copy: true }).stmts ?? [];
  if (stmts.length !== 1) return { kind: 'none', reason: 'undo is offered for one statement only' };
  const stmt = stmts[0]!.stmt;
  const kind = kindOf(stmt) ?? '';
  if (kind !== 'UpdateStmt' && kind !== 'DeleteStmt') return { kind: 'none', reason: ONLY_UPDATE_DELETE };
  const f = (stmt as Record<string, Fields>)[kind] ?? {};
  if (f.withClause) return { kind: 'none', reason: 'a write with WITH has no undo' };
  const rel = f.relation as Fields;
  const alias = isObj(rel.alias) ? String((rel.alias as Fields).aliasname) : String(rel.relname);
  const from = [{ RangeVar: rel }, ...list(kind === 'UpdateStmt' ? f.fromClause : f.usingClause)];
  const assigned: string[] = [];
  // The row as JSON text: every type keeps its exact text form (numeric digits, microseconds,
  // bytea hex), which jsonb_populate_recordset reads back into the same values. row_to_json
  // writes the text at once; to_jsonb built a jsonb value first (the bench's 1 000 rows: 5.2 ms
  // against 3.7 ms for the read).
  // An UPDATE keeps only the columns its inverse needs (its key and what it sets), by name with
  // json_build_object (at most 100 arguments); a DELETE the whole row.
  const call = (name: string, args: unknown[]) => ({
    FuncCall: { funcname: [{ String: { sval: name } }], args, funcformat: 'COERCE_EXPLICIT_CALL' },
  });
  const column = (c: string) => ({
    ColumnRef: { fields: [{ String: { sval: alias } }, { String: { sval: c } }] },
  });
  const row = (columns: string[]) => ({
    TypeCast: {
      arg:
        kind === 'UpdateStmt' && columns.length > 0 && columns.length <= 50
          ? call(
              'json_build_object',
              columns.flatMap((c) => [{ A_Const: { sval: { sval: c } } }, column(c)]),
            )
          : call('row_to_json', [{ ColumnRef: { fields: [{ String: { sval: alias } }, { A_Star: {} }] } }]),
      typeName: { names: [{ String: { sval: 'text' } }], typemod: -1 },
    },
  });
  const targets: unknown[] = [];
  for (const t of list(f.targetList)) {
    const rt = as(t, 'ResTarget')!;
    if (rt.indirection || as(rt.val, 'MultiAssignRef'))
      return { kind: 'none', reason: 'this SET form has no undo' };
    assigned.push(String(rt.name));
    // The SET expressions are read too, so the write's parameters all have a place in the read.
    if (!as(rt.val, 'SetToDefault'))
      targets.push({ ResTarget: { name: `set:${String(rt.name)}`, val: rt.val } });
  }
  const inner = (columns: string[]) =>
    deparseSelect([{ ResTarget: { name: 'saved_row', val: row(columns) } }, ...targets], from, f.whereClause);
  // One answer row built by the server: how many rows the read met (for the limit, counted before
  // any is kept), how many distinct rows are kept, and the document itself, as text, so the driver
  // parses no row and nothing is re-encoded. A row joined more than once (UPDATE … FROM, DELETE …
  // USING) is kept once: only then is DISTINCT needed.
  const joined = from.length > 1;
  const kept = joined ? 'DISTINCT undo_read.saved_row' : 'undo_read.saved_row';
  const text = (columns: string[], limit: number) =>
    `SELECT count(*)::int AS read_rows, count(${kept})::int AS kept_rows, '[' || coalesce(string_agg(${kept}, ','), '') || ']' AS saved_rows FROM (${inner(columns)} LIMIT ${Math.trunc(limit)}) AS undo_read`;
  return {
    kind: 'target',
    verb: kind === 'UpdateStmt' ? 'UPDATE' : 'DELETE',
    schema: typeof rel.schemaname === 'string' ? rel.schemaname : null,
    name: String(rel.relname),
    assigned,
    select: (columns, limit) => text(columns, limit),
  };
}

function mysqlTarget(statement: string): WriteTarget {
  const ast = astify(statement, 'MariaDB', { copy: true });
  const stmts = Array.isArray(ast) ? ast : [ast];
  if (stmts.length !== 1 || !isObj(stmts[0]))
    return { kind: 'none', reason: 'undo is offered for one statement only' };
  const s = stmts[0] as Obj;
  if ((s.type !== 'update' && s.type !== 'delete') || s.with)
    return { kind: 'none', reason: ONLY_UPDATE_DELETE };
  const from = s.type === 'update' ? s.table : s.from;
  const first = list(from)[0];
  if (list(from).length !== 1 || !isObj(first) || s.orderby || s.limit)
    return { kind: 'none', reason: 'a multi-table write or one with ORDER BY or LIMIT has no undo' };
  const alias = nameOf(first.as) ?? nameOf(first.table) ?? '';
  const assigned: string[] = [];
  const sets: unknown[] = [];
  for (const a of list(s.set)) {
    if (!isObj(a)) continue;
    assigned.push(String(a.column));
    sets.push({ expr: a.value, as: `set:${String(a.column)}` });
  }
  const marker = 'SELECT 1 AS `saved_marker`';
  const printed = sqlParser().sqlify(
    {
      type: 'select',
      columns: [{ expr: { type: 'number', value: 1 }, as: 'saved_marker' }, ...sets],
      from,
      where: s.where ?? null,
    } as never,
    { database: 'MariaDB' },
  );
  if (!printed.startsWith(marker)) return { kind: 'none', reason: 'the statement could not be read' };
  return {
    kind: 'target',
    verb: s.type === 'update' ? 'UPDATE' : 'DELETE',
    schema: nameOf(first.db),
    name: nameOf(first.table) ?? '',
    assigned,
    // Each value as the hex of its bytes: exact for every type (digits, fractions of seconds,
    // binary), and put back with UNHEX, which the column converts as it would the text.
    select: (columns) =>
      `SELECT ${columns.map((c) => `HEX(CAST(${myId(alias)}.${myId(c)} AS BINARY))`).join(', ')}${printed.slice(marker.length)} FOR UPDATE`,
  };
}

export const myId = (s: string) => `\`${s.replace(/`/g, '``')}\``;
export const pgId = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** What the inverse of a kept write needs to know about it. */
export interface SavedWrite {
  verb: 'UPDATE' | 'DELETE';
  schema: string;
  name: string;
  keys: string[];
  columns: string[];
  assigned: string[];
}

/**
 * The inverse of a kept write, with one parameter: the kept rows. A DELETE is undone by
 * inserting the rows again, an UPDATE by setting the columns it set back, by primary key.
 */
export function inverseStatement(adapter: AdapterName, w: SavedWrite): string {
  if (adapter === 'postgres') {
    const rel = `${pgId(w.schema)}.${pgId(w.name)}`;
    const rows = `jsonb_populate_recordset(NULL::${rel}, $1::jsonb)`;
    if (w.verb === 'DELETE') {
      const cols = w.columns.map(pgId).join(', ');
      return `INSERT INTO ${rel} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM ${rows}`;
    }
    const set = w.assigned.map((c) => `${pgId(c)} = undo_saved.${pgId(c)}`).join(', ');
    const on = w.keys.map((k) => `undo_target.${pgId(k)} = undo_saved.${pgId(k)}`).join(' AND ');
    return `UPDATE ${rel} AS undo_target SET ${set} FROM ${rows} AS undo_saved WHERE ${on}`;
  }
  const rel = `${myId(w.schema)}.${myId(w.name)}`;
  const at = (c: string) => `v${w.columns.indexOf(c)}`;
  const table = `JSON_TABLE(?, '$[*]' COLUMNS (${w.columns.map((_c, i) => `v${i} LONGTEXT PATH '$.v${i}'`).join(', ')})) AS undo_saved`;
  if (w.verb === 'DELETE') {
    const cols = w.columns.map(myId).join(', ');
    return `INSERT INTO ${rel} (${cols}) SELECT ${w.columns.map((c) => `UNHEX(undo_saved.${at(c)})`).join(', ')} FROM ${table}`;
  }
  const on = w.keys.map((k) => `undo_target.${myId(k)} = UNHEX(undo_saved.${at(k)})`).join(' AND ');
  const set = w.assigned.map((c) => `undo_target.${myId(c)} = UNHEX(undo_saved.${at(c)})`).join(', ');
  return `UPDATE ${rel} AS undo_target JOIN ${table} ON ${on} SET ${set}`;
}

/**
 * The kept rows as the inverse's parameter, from the backup's read. Postgres answers one row
 * holding the document already (the read's count, the kept count, the JSON text); MySQL answers
 * one row per touched row of hex values, kept as objects without the NULL ones (JSON_TABLE reads
 * a missing key as NULL). Hex digits need no JSON escaping, so the text is built directly.
 */
export function savedRowsDocument(
  adapter: AdapterName,
  w: SavedWrite,
  rows: unknown[][],
): { json: string; count: number } {
  if (adapter === 'postgres') {
    const r = rows[0] ?? [0, 0, '[]'];
    return { json: String(r[2]), count: Number(r[1]) };
  }
  // A MySQL write kept for undo is of one table (mysqlTarget), so no row is read twice. The read
  // lists keptColumns(w); each value goes under its place among all the columns (the inverse's).
  const keys = keptColumns(w).map((c) => `"v${w.columns.indexOf(c)}":"`);
  const out = new Array<string>(rows.length);
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!;
    let doc = '';
    for (let i = 0; i < keys.length; i++) {
      const v = r[i];
      if (v === null || v === undefined) continue;
      const hex = String(v);
      if (!/^[0-9A-F]*$/.test(hex)) throw new Error('a kept value is not hex');
      doc += `${doc ? ',' : ''}${keys[i]}${hex}"`;
    }
    out[k] = `{${doc}}`;
  }
  return { json: `[${out.join(',')}]`, count: rows.length };
}

/**
 * The columns a backup keeps: what the inverse needs. An UPDATE is undone by setting back the
 * columns it set, matched by key, so only those are kept; a DELETE by inserting whole rows.
 */
export function keptColumns(w: Pick<SavedWrite, 'verb' | 'keys' | 'columns' | 'assigned'>): string[] {
  const need = new Set([...w.keys, ...w.assigned]);
  // A name not among the columns would be put back as NULL: then the whole row is kept.
  if (w.verb === 'DELETE' || [...need].some((c) => !w.columns.includes(c))) return w.columns;
  return w.columns.filter((c) => need.has(c));
}

/** How many rows the backup's read met, held against the credential's limit. */
export function rowsRead(adapter: AdapterName, rows: unknown[][]): number {
  return adapter === 'postgres' ? Number(rows[0]?.[0] ?? 0) : rows.length;
}
