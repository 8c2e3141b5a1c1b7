// Writes under a data-protection policy (Postgres). A write is not rewritten: a masked value
// written back would corrupt the data. It is checked instead, with the same scope resolution as
// the reading rewriter, and refused when any clause reads a column the policy does not show:
// the rows-affected count, RETURNING, a constraint or a new table would carry that value back to
// the author. Assigning a value to a protected column (a blind write) reads nothing.
import type { DbSchema, RelationInfo } from '../../sql/catalog.ts';
import { as, type Fields, isObj, kindOf, list, names, sval } from '../../sql/pg-tree.ts';
import { type Ctes, fromItem, type Rewrite, withClause } from './pg-from.ts';
import { checkFunction, checkOperator, STATEMENT_NAMES } from './pg-refuse.ts';
import { ProtectionRefusedError, type RuleBook, UnknownObjectError, WriteReads } from './rules.ts';
import { type BaseEntry, type Level, Scope } from './scope.ts';

/** Statement kinds a policy lets run when they read nothing protected, with their names. */
export const PG_WRITE_NAMES: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  SelectStmt: 'SELECT INTO',
  CreateTableAsStmt: 'CREATE TABLE AS',
  ViewStmt: 'CREATE VIEW',
  CreateStmt: 'CREATE TABLE',
  AlterTableStmt: 'ALTER TABLE',
  IndexStmt: 'CREATE INDEX',
  RenameStmt: 'RENAME',
  DropStmt: 'DROP',
  TruncateStmt: 'TRUNCATE',
};

/** Fields each DML statement may have; an unknown one is refused (fail closed). */
const KEYS: Record<string, Set<string>> = {
  InsertStmt: new Set([
    'relation',
    'cols',
    'selectStmt',
    'onConflictClause',
    'returningList',
    'returningClause',
    'withClause',
    'override',
  ]),
  UpdateStmt: new Set([
    'relation',
    'targetList',
    'whereClause',
    'fromClause',
    'returningList',
    'returningClause',
    'withClause',
  ]),
  DeleteStmt: new Set([
    'relation',
    'usingClause',
    'whereClause',
    'returningList',
    'returningClause',
    'withClause',
  ]),
  MergeStmt: new Set([
    'relation',
    'sourceRelation',
    'joinCondition',
    'mergeWhenClauses',
    'withClause',
    'returningList',
    'returningClause',
  ]),
};

/**
 * Refuses a write that reads a protected value, naming the column and the clause; leaves the
 * tree as the server will run it. `make` builds the reading rewriter over the strict rules.
 */
export function checkPostgresWrite(stmt: unknown, rules: RuleBook, make: (reads: RuleBook) => Rewrite): void {
  const kind = kindOf(stmt) ?? 'unknown';
  const name = PG_WRITE_NAMES[kind];
  if (!name) {
    const shown = STATEMENT_NAMES[kind] ?? kind.replace(/Stmt$/, '');
    throw new ProtectionRefusedError(
      `${shown} is refused under a data-protection policy; SELECT, INSERT, UPDATE, DELETE, MERGE and table DDL run when they read no protected column`,
    );
  }
  const reads = new WriteReads(rules, name);
  const check = new PgWriteCheck(make(reads), reads);
  const f = (stmt as Record<string, Fields>)[kind]!;
  const keys = KEYS[kind];
  if (keys) {
    for (const k of Object.keys(f))
      if (!keys.has(k)) throw new ProtectionRefusedError(`the ${k} clause of ${name} is not supported`);
  }
  check.statement(kind, f);
}

class PgWriteCheck {
  constructor(
    private readonly rw: Rewrite,
    private readonly reads: WriteReads,
  ) {}

  private get schema(): DbSchema {
    return this.rw.schema;
  }

  statement(kind: string, f: Fields): void {
    switch (kind) {
      case 'InsertStmt':
        this.insert(f);
        return;
      case 'UpdateStmt':
        this.update(f);
        return;
      case 'DeleteStmt':
        this.delete(f);
        return;
      case 'MergeStmt':
        this.merge(f);
        return;
      case 'SelectStmt': {
        // SELECT … INTO t: the new table holds what the select reads.
        const into = f.intoClause;
        delete f.intoClause;
        this.query(f, 'the SELECT');
        f.intoClause = into;
        return;
      }
      case 'CreateTableAsStmt':
      case 'ViewStmt':
        this.query(as(f.query, 'SelectStmt') ?? refuse('this query is not supported'), 'the AS query');
        return;
      default:
        this.ddl(f);
        return;
    }
  }

  private query(sel: Fields, clause: string): void {
    this.reads.clause = clause;
    this.rw.select(sel, new Scope([], false), [], true);
  }

  /** WITH on the statement: CTEs must be SELECTs (pg-from.ts refuses data-modifying ones). */
  private ctes(f: Fields): Ctes {
    if (!f.withClause) return [];
    this.reads.clause = 'the WITH clause';
    return [withClause(this.rw, f.withClause as Fields, new Scope([], false), [])];
  }

  /** The written relation as the first entry of a new level. */
  private target(f: Fields, ctes: Ctes): { level: Level; entry: BaseEntry } {
    const level: Level = { entries: [], using: new Set() };
    fromItem(this.rw, { RangeVar: f.relation }, level, new Scope([], false), ctes);
    const entry = level.entries[0];
    if (entry?.kind !== 'base')
      throw new ProtectionRefusedError('the written relation must be a table or view');
    return { level, entry };
  }

  private from(items: unknown, level: Level, ctes: Ctes, clause: string): void {
    this.reads.clause = clause;
    for (const item of list(items)) fromItem(this.rw, item, level, new Scope([], false), ctes);
  }

  private expr(f: Fields, key: string, scope: Scope, ctes: Ctes, clause: string): void {
    if (f[key] === undefined) return;
    this.reads.clause = clause;
    if (as(f[key], 'CurrentOfExpr')) throw new ProtectionRefusedError('WHERE CURRENT OF is not supported');
    f[key] = this.rw.expr(f[key], scope, ctes);
  }

  /**
   * SET / INSERT targets: assigning is not reading (a hashed column excepted, WriteReads.assigned);
   * subscripts and the values are read.
   */
  private assign(targets: unknown, scope: Scope, ctes: Ctes, clause: string, entry: BaseEntry): void {
    this.reads.clause = clause;
    for (const t of list(targets)) {
      const rt = as(t, 'ResTarget');
      if (!rt) throw new ProtectionRefusedError(`this ${clause} is not supported`);
      if (typeof rt.name === 'string') this.assigned(entry, rt.name);
      if (rt.indirection !== undefined) rt.indirection = this.rw.expr(rt.indirection, scope, ctes);
      if (rt.val !== undefined) rt.val = this.rw.expr(rt.val, scope, ctes);
    }
  }

  private returning(f: Fields, scope: Scope, ctes: Ctes): void {
    const rc = isObj(f.returningClause) ? f.returningClause : null;
    const targets = f.returningList ?? rc?.exprs;
    if (rc && Object.keys(rc).some((k) => k !== 'exprs'))
      throw new ProtectionRefusedError('RETURNING OLD/NEW is not supported');
    this.reads.clause = 'RETURNING';
    for (const t of list(targets)) {
      const rt = as(t, 'ResTarget');
      if (!rt) throw new ProtectionRefusedError('this RETURNING list is not supported');
      const fields = list(as(rt.val, 'ColumnRef')?.fields);
      if (kindOf(fields.at(-1)) === 'A_Star') {
        // `RETURNING *` reads every column of the qualified entry, or of every entry.
        const qualifier = names(fields.slice(0, -1));
        const named = qualifier.length ? scope.findEntry(qualifier) : null;
        // A qualifier the scope does not know (`public.users.*` written without the schema in
        // FROM, PostgreSQL 18's old.* and new.*) is refused as the read path refuses it.
        if (qualifier.length && !named)
          throw new UnknownObjectError(`missing FROM-clause entry for table "${qualifier.at(-1)}"`);
        const entries = named ? [named] : (scope.innermost?.entries ?? []);
        for (const e of entries) if (e.kind === 'base') this.readAll(e.rel);
        continue;
      }
      rt.val = this.rw.expr(rt.val, scope, ctes);
    }
  }

  private readAll(rel: RelationInfo): void {
    for (const c of rel.columns) this.reads.treatment(rel.schema, rel.name, c.name);
  }

  private insert(f: Fields): void {
    const ctes = this.ctes(f);
    const { level, entry } = this.target(f, ctes);
    // Without a column list, VALUES and SELECT fill the columns in order, any of them.
    const cols = list(f.cols);
    if (cols.length > 0) this.assign(cols, new Scope([], false), ctes, 'the INSERT column list', entry);
    else if (f.selectStmt) for (const name of entry.colNames) this.assigned(entry, name);
    // INSERT … SELECT and VALUES see no column of the written table.
    if (f.selectStmt) {
      this.reads.clause = 'the inserted values';
      const sel = as(f.selectStmt, 'SelectStmt') ?? refuse('this INSERT source is not supported');
      this.rw.select(sel, new Scope([], false), ctes, true);
    }
    const scope = new Scope([level], false);
    const conflict = isObj(f.onConflictClause) ? f.onConflictClause : null;
    if (conflict) {
      const infer = isObj(conflict.infer) ? conflict.infer : null;
      if (infer?.conname)
        throw new ProtectionRefusedError(
          'ON CONFLICT ON CONSTRAINT is not supported: name the conflict columns',
        );
      this.reads.clause = 'the ON CONFLICT condition';
      for (const e of list(infer?.indexElems)) {
        const el = as(e, 'IndexElem') ?? refuse('this ON CONFLICT target is not supported');
        if (typeof el.name === 'string') this.column(entry, el.name);
        else el.expr = this.rw.expr(el.expr, scope, ctes);
      }
      if (infer) this.expr(infer, 'whereClause', scope, ctes, 'the ON CONFLICT condition');
      // DO UPDATE sees the row in the table and the proposed one (EXCLUDED), which the author wrote.
      const excluded = { kind: 'derived', refName: 'excluded', columns: null } as const;
      const both = new Scope([{ entries: [entry, excluded], using: new Set() }], false);
      this.assign(conflict.targetList, both, ctes, 'the ON CONFLICT DO UPDATE SET clause', entry);
      this.expr(conflict, 'whereClause', both, ctes, 'the ON CONFLICT DO UPDATE WHERE clause');
    }
    this.returning(f, scope, ctes);
  }

  private update(f: Fields): void {
    const ctes = this.ctes(f);
    const { level, entry } = this.target(f, ctes);
    this.from(f.fromClause, level, ctes, 'the FROM clause');
    const scope = new Scope([level], false);
    this.assign(f.targetList, scope, ctes, 'the SET clause', entry);
    this.expr(f, 'whereClause', scope, ctes, 'the WHERE clause');
    this.returning(f, scope, ctes);
  }

  private delete(f: Fields): void {
    const ctes = this.ctes(f);
    const { level } = this.target(f, ctes);
    this.from(f.usingClause, level, ctes, 'the USING clause');
    const scope = new Scope([level], false);
    this.expr(f, 'whereClause', scope, ctes, 'the WHERE clause');
    this.returning(f, scope, ctes);
  }

  private merge(f: Fields): void {
    const ctes = this.ctes(f);
    const { level, entry } = this.target(f, ctes);
    this.from([f.sourceRelation], level, ctes, 'the USING clause');
    const scope = new Scope([level], false);
    this.expr(f, 'joinCondition', scope, ctes, 'the ON condition');
    for (const w of list(f.mergeWhenClauses)) {
      const when = as(w, 'MergeWhenClause') ?? refuse('this MERGE action is not supported');
      this.expr(when, 'condition', scope, ctes, 'a WHEN condition');
      this.assign(when.targetList, scope, ctes, 'a WHEN … UPDATE SET clause', entry);
      // INSERT VALUES without a column list fills the columns in order.
      if (
        when.commandType === 'CMD_INSERT' &&
        list(when.targetList).length === 0 &&
        when.values !== undefined
      )
        for (const name of entry.colNames) this.assigned(entry, name);
      this.reads.clause = 'a WHEN … INSERT VALUES list';
      if (when.values !== undefined) when.values = this.rw.expr(when.values, scope, ctes);
    }
    this.returning(f, scope, ctes);
  }

  /** A column of the written table given a value (by name, as the table shows it). */
  private assigned(entry: BaseEntry, name: string): void {
    const col = entry.rel.columns[entry.colNames.indexOf(name)];
    if (col) this.reads.assigned(entry.rel, col.name);
  }

  /** A column of the written table named by a clause that compares or indexes it. */
  private column(entry: BaseEntry, name: string): void {
    const i = entry.colNames.indexOf(name);
    const col = entry.rel.columns[i];
    if (col) this.reads.treatment(entry.rel.schema, entry.rel.name, col.name);
  }

  /**
   * Table DDL: a new table holds nothing yet; on an existing one, an index, constraint,
   * generated column, type change or foreign key over a protected column would answer
   * questions about its values (a failed unique index says two rows share one), so any DDL
   * naming a protected column is refused. Functions are checked as in a read; sub-selects are
   * refused.
   */
  private ddl(f: Fields): void {
    this.reads.clause = 'the definition';
    renames(f);
    // A new child or partition: its rows would be read as its parent's, under the parent's rules.
    if (list(f.inhRelations).length > 0 || f.partbound !== undefined)
      throw new ProtectionRefusedError(
        "a table that inherits or is a partition is refused under a data-protection policy: its rows would be read under another table's rules",
      );
    const rel = isObj(f.relation) ? this.relation(f.relation) : null;
    const walk = (n: unknown): void => {
      if (Array.isArray(n)) {
        for (const x of n) walk(x);
        return;
      }
      if (!isObj(n)) return;
      const kind = kindOf(n);
      const v = kind ? (n[kind] as Fields) : n;
      switch (kind) {
        case 'SubLink':
        case 'SelectStmt':
          throw new ProtectionRefusedError(`a sub-select in ${this.reads.statement} is not supported`);
        case 'FuncCall':
          checkFunction(names(v.funcname), this.schema);
          break;
        case 'A_Expr':
          if (v.kind === 'AEXPR_OP') checkOperator(names(v.name), this.schema);
          break;
        case 'ColumnRef':
          this.reference(rel, list(v.fields));
          break;
        case 'IndexElem':
          if (typeof v.name === 'string') this.named(rel, v.name);
          break;
        case 'AlterTableCmd':
          // Inheriting from a table or becoming its partition puts these rows into its reads,
          // under its rules, not this table's.
          if (v.subtype === 'AT_AddInherit' || v.subtype === 'AT_AttachPartition')
            throw new ProtectionRefusedError(
              `${v.subtype === 'AT_AddInherit' ? 'INHERIT' : 'ATTACH PARTITION'} is refused under a data-protection policy: the rows would be read under another table's rules`,
            );
          if (typeof v.name === 'string') this.named(rel, v.name);
          break;
        case 'Constraint': {
          for (const k of list(v.keys).concat(list(v.fk_attrs), list(v.including))) this.named(rel, sval(k));
          if (isObj(v.pktable)) {
            // A foreign key checks that each new value exists among the referenced ones.
            const pk = this.relation(v.pktable);
            const attrs = names(v.pk_attrs);
            if (pk && attrs.length === 0)
              throw new ProtectionRefusedError(
                'a foreign key must name the referenced columns under a policy',
              );
            for (const a of attrs) this.named(pk, a);
          }
          break;
        }
      }
      if (!kind && typeof v.subname === 'string') this.named(rel, v.subname);
      for (const x of Object.values(v)) walk(x);
    };
    walk(f);
  }

  private relation(rv: Fields): RelationInfo | null {
    return this.schema.find(typeof rv.schemaname === 'string' ? rv.schemaname : null, String(rv.relname));
  }

  /**
   * A column reference in a definition. On an existing table, `t.*`, the whole row `t` (also as
   * `(t).col`, `t::text`) and any name that is not one of its columns read every column: a
   * CHECK, a USING conversion or an index expression over them answers with their values (an
   * error quoting the row, a column filled from it).
   */
  private reference(rel: RelationInfo | null, fields: unknown[]): void {
    const last = fields.at(-1);
    const name = sval(last);
    if (rel && (kindOf(last) === 'A_Star' || !rel.columns.some((c) => c.name === name))) {
      for (const c of rel.columns) this.reads.treatment(rel.schema, rel.name, c.name);
      return;
    }
    this.named(rel, name);
  }

  private named(rel: RelationInfo | null, name: string | null): void {
    const col = name === null ? undefined : rel?.columns.find((c) => c.name === name);
    if (rel && col) this.reads.treatment(rel.schema, rel.name, col.name);
  }
}

/**
 * Rules name tables (and schemas): renaming a table, a view or a schema would move its rows under
 * another name's rules (`users` renamed to a shown `orders`). A column is checked as named
 * (ddl below); other objects (constraints, indexes, sequences, …) hold no rows.
 */
function renames(f: Fields): void {
  const type = f.renameType;
  if (typeof type !== 'string') return;
  if (RENAMED_ROWS.has(type))
    throw new ProtectionRefusedError(
      'renaming a table, view or schema is refused under a data-protection policy: its rules name it',
    );
}

const RENAMED_ROWS = new Set([
  'OBJECT_TABLE',
  'OBJECT_VIEW',
  'OBJECT_MATVIEW',
  'OBJECT_FOREIGN_TABLE',
  'OBJECT_SCHEMA',
]);

function refuse(reason: string): never {
  throw new ProtectionRefusedError(reason);
}
