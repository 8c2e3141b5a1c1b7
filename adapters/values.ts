// What every engine shares once rows come off the wire: the JSON-friendly value mapping, the row
// cap, and the statement kind for engines that report none. README.md "Value mapping" documents it.
import { AdapterError } from './errors.ts';
import type { ExecuteOptions, QueryResult, SchemaTable } from './types.ts';

/**
 * One result value in a form JSON carries without loss or surprise: bigint → decimal string,
 * Date → ISO 8601 UTC, bytes → base64, NaN/±Infinity → 'NaN'/'Infinity'/'-Infinity', arrays
 * element-wise. Objects are parsed JSON documents (json/jsonb, MySQL JSON, ClickHouse tuples) and
 * pass through.
 */
export function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return v.toString();
    case 'object':
      if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
      if (v instanceof Uint8Array)
        return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      if (Array.isArray(v)) return v.map(jsonValue);
      return v;
    default:
      return String(v);
  }
}

/** Maps every cell of `row` through jsonValue, in place. */
export function jsonRow(row: unknown[]): unknown[] {
  for (let i = 0; i < row.length; i++) row[i] = jsonValue(row[i]);
  return row;
}

/** Checks the execute options once, so a driver never sees a negative cap or a zero timeout. */
export function checkExecuteOptions(options: ExecuteOptions): void {
  if (!Number.isInteger(options.maxRows) || options.maxRows < 0) {
    throw new AdapterError(`maxRows must be a whole number >= 0, got ${options.maxRows}`, 'config');
  }
  if (!(options.timeoutSeconds > 0) || !Number.isFinite(options.timeoutSeconds)) {
    throw new AdapterError(`timeoutSeconds must be > 0, got ${options.timeoutSeconds}`, 'config');
  }
}

/** The statement's kind; throws for a statement with no words (empty, or only comments). */
export function checkStatement(sql: string): string {
  const kind = statementKind(sql);
  if (!kind) throw new AdapterError('the statement is empty', 'query');
  return kind;
}

/** Collects at most `maxRows` rows; `add` returns false once one more arrived, so the caller stops reading. */
export class RowCollector {
  readonly rows: unknown[][] = [];
  truncated = false;
  constructor(private readonly maxRows: number) {}

  add(row: unknown[]): boolean {
    if (this.rows.length < this.maxRows) {
      this.rows.push(jsonRow(row));
      return true;
    }
    this.truncated = true;
    return false;
  }

  /** The query result; `affected` is the write count when the statement returned no columns. */
  result(columns: string[], command: string, messages: string[], affected: number | null): QueryResult {
    return {
      columns,
      rows: this.rows,
      command,
      messages,
      num_rows: columns.length > 0 ? this.rows.length : (affected ?? 0),
      truncated: this.truncated,
    };
  }
}

// Statements that leave a pooled connection's session as they found it. After anything else
// (BEGIN, SET, USE, LOCK, CREATE TEMPORARY, CALL, ...) the next user of the connection could
// inherit an open transaction or changed settings, so the adapters close it instead of reusing it.
const SESSION_NEUTRAL = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'REPLACE',
  'VALUES',
  'TABLE',
  'EXPLAIN',
  'SHOW',
  'DESCRIBE',
  'DESC',
]);

/** Whether a pooled connection may be reused after a statement of this kind (see statementKind). */
export function reusableAfter(kind: string): boolean {
  return SESSION_NEUTRAL.has(kind);
}

// Keywords that can follow the CTEs of a WITH statement at nesting depth 0.
const MAIN_AFTER_WITH = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'VALUES',
  'TABLE',
  'REPLACE',
]);

/**
 * The statement's kind from its first keyword, upper-cased (`SELECT`, `INSERT`, `CREATE`...),
 * skipping comments and leading parentheses. For `WITH`, the main statement's keyword after the
 * CTEs (what Postgres reports as the command tag). '' for an empty statement.
 */
export function statementKind(sql: string): string {
  const words = wordsAtDepth(sql);
  const first = words.next();
  if (first.done) return '';
  const kind = first.value.word;
  if (kind !== 'WITH') return kind;
  const depth0 = first.value.depth;
  for (const { word, depth } of words) if (depth === depth0 && MAIN_AFTER_WITH.has(word)) return word;
  return kind;
}

/** Words outside strings, quoted identifiers and comments, with their parenthesis depth. */
function* wordsAtDepth(sql: string): Generator<{ word: string; depth: number }> {
  let i = 0;
  let depth = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      // Postgres nests block comments; the other engines do not, and nesting is harmless for them.
      let nest = 1;
      i += 2;
      while (i < n && nest > 0) {
        const pair = sql.slice(i, i + 2);
        if (pair === '/*' || pair === '*/') {
          nest += pair === '/*' ? 1 : -1;
          i += 2;
        } else {
          i++;
        }
      }
    } else if (c === "'" || c === '"' || c === '`') {
      const end = sql.indexOf(c, i + 1);
      i = end === -1 ? n : end + 1;
    } else if (c === '[') {
      const end = sql.indexOf(']', i + 1);
      i = end === -1 ? n : end + 1;
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i, i + 64))) {
      const tag = (/^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64)) as RegExpExecArray)[0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end === -1 ? n : end + tag.length;
    } else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')') {
      depth--;
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(sql[j] as string)) j++;
      yield { word: sql.slice(i, j).toUpperCase(), depth };
      i = j;
    } else {
      i++;
    }
  }
}

/** One column of one table or view, as the schema queries of every engine return it. */
export interface SchemaRow {
  schema: string;
  name: string;
  is_view: boolean;
  column: string;
  type: string;
  nullable: boolean;
}

/** Rows of (table, column), ordered by table, into tables with their columns. */
export function groupSchema(rows: readonly SchemaRow[]): SchemaTable[] {
  const tables: SchemaTable[] = [];
  let current: SchemaTable | undefined;
  for (const r of rows) {
    if (!current || current.schema !== r.schema || current.name !== r.name) {
      current = { schema: r.schema, name: r.name, kind: r.is_view ? 'view' : 'table', columns: [] };
      tables.push(current);
    }
    current.columns.push({ name: r.column, type: r.type, nullable: r.nullable });
  }
  return tables;
}

/**
 * A session tag or prepared-transaction id, checked before it reaches the server: it is written
 * into the statement text (PREPARE TRANSACTION and XA take no parameters, a MySQL tag is a
 * comment), so only letters, digits, `:`, `_`, `.` and `-`, and at most 63 characters (Postgres
 * truncates application_name past that, XA allows 64).
 */
export function checkSessionName(name: string): string {
  if (!/^[A-Za-z0-9:_.-]{1,63}$/.test(name)) throw new AdapterError('invalid session tag', 'config');
  return name;
}
