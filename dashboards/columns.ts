// The result columns a panel query will return, read from its parse tree at save time, so that a
// row action mapping a column the query never returns is refused when the dashboard is saved
// (SPEC.md 2.3 input_mappings) rather than when someone clicks the button.
// The parsers load on the first panel saved, not when a process starts.
import type { AdapterName } from '../adapters/types.ts';

/**
 * `names`: output names known for certain. `open`: the query may return further columns whose
 * names cannot be known without the database (`*`, an unnamed expression, an engine we do not
 * parse); a mapping to a name outside `names` is then accepted at save and checked on each row.
 */
export interface PanelColumns {
  names: string[];
  open: boolean;
}

const OPEN: PanelColumns = { names: [], open: true };

type PgParse = (statement: string) => unknown;
type MysqlParser = { astify(statement: string, options: { database: string }): unknown };

let pgParser: Promise<PgParse> | null = null;
let mysqlParser: Promise<MysqlParser> | null = null;

/** Output columns of one SELECT statement (already rendered with placeholders). */
export async function panelColumns(adapter: AdapterName, statement: string): Promise<PanelColumns> {
  try {
    if (adapter === 'postgres') {
      pgParser ??= import('libpg-query').then(async ({ loadModule, parseSync }) => {
        await loadModule();
        return parseSync;
      });
      return postgresColumns(await pgParser, statement);
    }
    if (adapter === 'mysql') {
      mysqlParser ??= import('node-sql-parser').then((m) => new m.default.Parser());
      return mysqlColumns(await mysqlParser, statement);
    }
  } catch {
    // A statement our parser cannot read is the database's to judge when it runs.
  }
  return OPEN;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const get = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((acc, k) => (isObj(acc) ? acc[k] : undefined), o);

function postgresColumns(parseSync: PgParse, statement: string): PanelColumns {
  const stmts = (parseSync(statement) as { stmts?: unknown[] }).stmts ?? [];
  if (stmts.length !== 1) return OPEN;
  let select = get(stmts[0], 'stmt', 'SelectStmt');
  // A set operation takes its column names from its first branch.
  while (isObj(select) && isObj(select.larg)) select = select.larg;
  const targets = get(select, 'targetList');
  if (!Array.isArray(targets)) return OPEN;
  const out: PanelColumns = { names: [], open: false };
  for (const t of targets) {
    const name = postgresName(get(t, 'ResTarget'));
    if (name === null) out.open = true;
    else out.names.push(name);
  }
  return out;
}

/** The name Postgres gives an output column (FigureColname), where it is certain. */
function postgresName(target: unknown): string | null {
  const alias = get(target, 'name');
  if (typeof alias === 'string') return alias;
  let val = get(target, 'val');
  while (isObj(get(val, 'TypeCast'))) {
    const arg = get(val, 'TypeCast', 'arg');
    // `'x'::int` is named after the type, which we do not model: unknown.
    if (!isObj(get(arg, 'ColumnRef'))) return null;
    val = arg;
  }
  const fields = get(val, 'ColumnRef', 'fields');
  if (Array.isArray(fields)) {
    const last = get(fields.at(-1), 'String', 'sval');
    return typeof last === 'string' ? last : null;
  }
  const fn = get(val, 'FuncCall', 'funcname');
  if (Array.isArray(fn)) {
    const last = get(fn.at(-1), 'String', 'sval');
    return typeof last === 'string' ? last : null;
  }
  return null;
}

function mysqlColumns(parser: MysqlParser, statement: string): PanelColumns {
  const ast = parser.astify(statement, { database: 'MariaDB' }) as unknown;
  const one = Array.isArray(ast) ? (ast.length === 1 ? ast[0] : null) : ast;
  if (get(one, 'type') !== 'select') return OPEN;
  const columns = get(one, 'columns');
  if (!Array.isArray(columns)) return OPEN;
  const out: PanelColumns = { names: [], open: false };
  for (const c of columns) {
    const alias = get(c, 'as');
    const column = get(c, 'expr', 'column');
    if (typeof alias === 'string') out.names.push(alias);
    else if (get(c, 'expr', 'type') === 'column_ref' && typeof column === 'string' && column !== '*')
      out.names.push(column);
    else out.open = true;
  }
  return out;
}
