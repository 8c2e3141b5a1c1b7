// Writes under a data-protection policy (MySQL/MariaDB), over node-sql-parser's tree: as for
// Postgres (pg-write.ts), a write is checked rather than rewritten, and refused when any clause
// reads a column the policy does not show. Assigning a value to a protected column reads nothing.
import type { DbSchema, RelationInfo } from '../../sql/catalog.ts';
import { isObj, list, nameOf, type Obj } from '../../sql/mysql-tree.ts';
import { checkFunction } from './mysql-refuse.ts';
import { ProtectionRefusedError, type RuleBook, UnknownColumnError, WriteReads } from './rules.ts';
import { type Level, Scope } from './scope.ts';

type Ctes = ReadonlyArray<Map<string, string[] | null>>;

/**
 * What the write check needs of the read rewriter (MysqlRewriter in mysql.ts), named here so the
 * two files do not import each other: mysql.ts calls this check, this check reads through it.
 */
export interface MysqlReadRewriter {
  readonly schema: DbSchema;
  select(sel: Obj, outer: Scope, ctes: Ctes, top: boolean): string[] | null;
  with(items: unknown[], outer: Scope, ctes: Ctes): Map<string, string[] | null>;
  fromItem(item: unknown, level: Level, outer: Scope, ctes: Ctes): void;
  expr(n: unknown, scope: Scope, ctes: Ctes): unknown;
}

/** Fields each statement may carry with a value; any other is refused (fail closed). */
const KEYS: Record<string, Set<string>> = {
  update: new Set(['with', 'type', 'table', 'set', 'where', 'orderby', 'limit', 'returning']),
  delete: new Set(['with', 'type', 'table', 'from', 'where', 'orderby', 'limit', 'returning']),
  insert: new Set([
    'type',
    'table',
    'columns',
    'values',
    'set',
    'partition',
    'prefix',
    'on_duplicate_update',
    'returning',
  ]),
};
KEYS.replace = KEYS.insert!;

const NAMES: Record<string, string> = {
  update: 'UPDATE',
  delete: 'DELETE',
  insert: 'INSERT',
  replace: 'REPLACE',
  create: 'CREATE',
  alter: 'ALTER TABLE',
  drop: 'DROP',
  truncate: 'TRUNCATE',
  rename: 'RENAME TABLE',
};

/** Refuses a write that reads a protected value, naming the column and the clause. */
export function checkMysqlWrite(
  stmt: Obj,
  rules: RuleBook,
  make: (reads: RuleBook) => MysqlReadRewriter,
): void {
  const type = String(stmt.type);
  const name = NAMES[type];
  if (!name)
    throw new ProtectionRefusedError(`${type.toUpperCase()} is refused under a data-protection policy`);
  const keys = KEYS[type];
  if (keys) {
    for (const [k, v] of Object.entries(stmt)) {
      if (v !== null && v !== undefined && !keys.has(k) && k !== 'tableList' && k !== 'columnList')
        throw new ProtectionRefusedError(`the ${k} clause of ${name} is not supported`);
    }
  }
  const reads = new WriteReads(rules, name);
  new MysqlWriteCheck(make(reads), reads).statement(type, stmt);
}

class MysqlWriteCheck {
  constructor(
    private readonly rw: MysqlReadRewriter,
    private readonly reads: WriteReads,
  ) {}

  statement(type: string, s: Obj): void {
    if (type === 'update' || type === 'delete') this.dml(s, type);
    else if (type === 'insert' || type === 'replace') this.insert(s);
    else this.ddl(type, s);
  }

  private ctes(s: Obj) {
    if (!s.with) return [];
    this.reads.clause = 'the WITH clause';
    return [this.rw.with(list(s.with), new Scope([], true), [])];
  }

  private level(items: unknown, clause: string, ctes: ReturnType<MysqlWriteCheck['ctes']>): Scope {
    this.reads.clause = clause;
    const level: Level = { entries: [], using: new Set() };
    for (const item of list(items)) this.rw.fromItem(item, level, new Scope([], true), ctes);
    return new Scope([level], true);
  }

  private expr(v: unknown, scope: Scope, ctes: ReturnType<MysqlWriteCheck['ctes']>, clause: string): unknown {
    this.reads.clause = clause;
    return this.rw.expr(v, scope, ctes);
  }

  /** UPDATE and DELETE: the FROM list (with its joins) is the scope of every clause. */
  private dml(s: Obj, type: string): void {
    const ctes = this.ctes(s);
    const scope = this.level(type === 'update' ? s.table : s.from, 'the JOIN condition', ctes);
    if (type === 'update') this.assign(s.set, scope, ctes, 'the SET clause');
    s.where = this.expr(s.where, scope, ctes, 'the WHERE clause');
    // ORDER BY with LIMIT picks rows by the order of a value.
    s.orderby = this.expr(s.orderby, scope, ctes, 'the ORDER BY clause');
    s.limit = this.expr(s.limit, scope, ctes, 'the LIMIT clause');
    this.returning(s, scope, ctes);
  }

  private assign(
    set: unknown,
    scope: Scope,
    ctes: ReturnType<MysqlWriteCheck['ctes']>,
    clause: string,
  ): void {
    this.reads.clause = clause;
    for (const a of list(set)) {
      if (!isObj(a)) throw new ProtectionRefusedError(`this ${clause} is not supported`);
      const column = nameOf(a.column);
      if (column !== null) this.assigned(scope, nameOf(a.table), column);
      // VALUES(col) in ON DUPLICATE KEY UPDATE is the value the statement itself proposed.
      if (isProposedValue(a.value)) continue;
      a.value = this.rw.expr(a.value, scope, ctes);
    }
  }

  private insert(s: Obj): void {
    const ctes = this.ctes(s);
    for (const c of list(s.columns)) {
      // Printed without quotes by the printer: only plain names, or the name could become SQL.
      if (typeof c !== 'string' || !/^[A-Za-z0-9_$]+$/.test(c))
        throw new ProtectionRefusedError('an INSERT column name must be a plain name under a policy');
    }
    const target = this.level(s.table, 'the INSERT target', ctes);
    const values = isObj(s.values) ? s.values : null;
    // Without a column list, VALUES and SELECT fill the columns in order, any of them.
    const columns = list(s.columns) as string[];
    if (columns.length > 0) for (const c of columns) this.assigned(target, null, c);
    else if (values)
      for (const e of target.innermost?.entries ?? [])
        if (e.kind === 'base') for (const c of e.rel.columns) this.reads.assigned(e.rel, c.name);
    if (values?.type === 'select') {
      // INSERT … SELECT sees no column of the written table.
      this.reads.clause = 'the inserted values';
      this.rw.select(values, new Scope([], true), ctes, true);
    } else if (values) {
      values.values = this.expr(values.values, target, ctes, 'the VALUES list');
    } else if (s.values !== null && s.values !== undefined) {
      throw new ProtectionRefusedError('this INSERT source is not supported');
    }
    this.assign(s.set, target, ctes, 'the SET clause');
    const odku = isObj(s.on_duplicate_update) ? s.on_duplicate_update : null;
    if (odku) this.assign(odku.set, target, ctes, 'the ON DUPLICATE KEY UPDATE clause');
    this.returning(s, target, ctes);
  }

  private returning(s: Obj, scope: Scope, ctes: ReturnType<MysqlWriteCheck['ctes']>): void {
    if (!isObj(s.returning)) return;
    this.reads.clause = 'RETURNING';
    for (const c of list(s.returning.columns)) {
      const ref = isObj(c) && isObj(c.expr) && c.expr.type === 'column_ref' ? c.expr : null;
      if (ref && nameOf(ref.column) === '*') {
        for (const e of scope.innermost?.entries ?? []) if (e.kind === 'base') this.readAll(e.rel);
        continue;
      }
      if (isObj(c)) c.expr = this.rw.expr(c.expr, scope, ctes);
    }
  }

  /** A column given a value: WriteReads.assigned refuses a hashed one. */
  private assigned(scope: Scope, table: string | null, column: string): void {
    let r: ReturnType<Scope['resolveBare']>;
    try {
      r = table ? scope.resolveQualified([table], column) : scope.resolveBare(column, false);
    } catch (err) {
      // Not a column of the written tables: the server refuses the statement.
      if (err instanceof UnknownColumnError) return;
      throw err;
    }
    if (r.kind === 'base') this.reads.assigned(r.entry.rel, r.column.name);
  }

  private readAll(rel: RelationInfo): void {
    for (const c of rel.columns) this.reads.treatment(rel.schema, rel.name, c.name);
  }

  /**
   * Table DDL: CREATE VIEW / CREATE TABLE … AS reads its query; an index, constraint,
   * generated column or foreign key over a protected column would answer questions about its
   * values, so DDL naming one is refused. Functions are checked as in a read.
   */
  private ddl(type: string, s: Obj): void {
    // Rules name tables: a renamed table's rows would be read under another name's rules
    // (`users` renamed to a shown `orders`). The Postgres check refuses the same (pg-write.ts).
    if (type === 'rename' || (type === 'alter' && list(s.expr).some(renamesTable)))
      throw new ProtectionRefusedError(
        'renaming a table is refused under a data-protection policy: its rules name it',
      );
    if (type === 'drop' || type === 'truncate') return;
    if (type === 'create' && (isObj(s.select) || isObj(s.query_expr))) {
      this.reads.clause = 'the AS query';
      const q = isObj(s.select) ? s.select : (s.query_expr as Obj);
      this.rw.select(isObj(q.ast) ? q.ast : q, new Scope([], true), [], true);
      return;
    }
    if (type === 'create' && s.keyword !== 'table' && s.keyword !== 'index')
      throw new ProtectionRefusedError(`CREATE ${String(s.keyword).toUpperCase()} is refused under a policy`);
    this.reads.clause = 'the definition';
    const first = list(s.table)[0] ?? s.table;
    const rel = isObj(first) ? this.relation(first) : null;
    const walk = (n: unknown, on: RelationInfo | null): void => {
      if (Array.isArray(n)) {
        for (const x of n) walk(x, on);
        return;
      }
      if (!isObj(n)) return;
      if (isObj(n.ast) || n.type === 'select')
        throw new ProtectionRefusedError(`a sub-select in ${this.reads.statement} is not supported`);
      if (n.type === 'function') checkFunction(n.name, this.rw.schema);
      if (n.type === 'column_ref') this.named(on, nameOf(n.column));
      for (const [k, v] of Object.entries(n)) {
        if (k === 'tableList' || k === 'columnList') continue;
        if (k === 'reference_definition' && isObj(v)) {
          // A foreign key checks that each new value exists among the referenced ones.
          const ref = list(v.table)[0];
          walk(v.definition, isObj(ref) ? this.relation(ref) : null);
          continue;
        }
        walk(v, on);
      }
    };
    walk(s, rel);
  }

  private relation(t: Obj): RelationInfo | null {
    const name = nameOf(t.table);
    return name === null ? null : this.rw.schema.find(nameOf(t.db), name);
  }

  private named(rel: RelationInfo | null, name: string | null): void {
    const col =
      name === null ? undefined : rel?.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (rel && col) this.reads.treatment(rel.schema, rel.name, col.name);
  }
}

function renamesTable(action: unknown): boolean {
  return isObj(action) && action.action === 'rename' && action.resource !== 'column';
}

function isProposedValue(v: unknown): boolean {
  if (!isObj(v) || v.type !== 'function' || !isObj(v.name)) return false;
  const fname = nameOf(list(v.name.name)[0])?.toLowerCase();
  const args = isObj(v.args) ? list(v.args.value) : [];
  return (
    (fname === 'values' || fname === 'value') &&
    args.length === 1 &&
    isObj(args[0]) &&
    args[0].type === 'column_ref'
  );
}
