// Name resolution shared by the dialect rewriters: which FROM item, at which query level, a
// column reference denotes. Base entries are tables and views of the schema; derived entries
// are subqueries, CTEs and table functions whose output the rewriter has already made safe,
// so only references that land on a base entry are ever replaced.

import type { ColumnInfo, RelationInfo } from '../../sql/catalog.ts';
import { ProtectionRefusedError, UnknownColumnError, UnknownObjectError } from './rules.ts';

export interface BaseEntry {
  kind: 'base';
  /** The name the query refers to it by: its alias, else the relation name. */
  refName: string;
  /** The schema it was written with, when qualified and not aliased (`public.users.email`). */
  schemaQualifier: string | null;
  rel: RelationInfo;
  /** Column names as visible in the query (column aliases `users u(a, b)` rename positionally). */
  colNames: string[];
}

export interface DerivedEntry {
  kind: 'derived';
  refName: string;
  /** Output column names; null when not known (table functions), and then it never shadows. */
  columns: string[] | null;
}

export type Entry = BaseEntry | DerivedEntry;

/** One query level: its FROM items, and the USING columns its joins merged. */
export interface Level {
  entries: Entry[];
  /** Merged USING columns; the rewriter has checked that none is protected. */
  using: Set<string>;
  /**
   * MySQL: the current comma-separated group of joined items (where it starts in `entries`, and
   * the USING columns merged in it): a JOIN's ON sees only that group.
   */
  group?: { start: number; using: Set<string> };
}

export type Resolution = { kind: 'base'; entry: BaseEntry; column: ColumnInfo } | { kind: 'derived' };

/** Resolves names innermost level first, as SQL does; `foldCase` for MySQL's case-insensitive names. */
export class Scope {
  constructor(
    readonly levels: readonly Level[],
    private readonly foldCase: boolean,
  ) {}

  /** A new scope with one more (inner) level. */
  push(level: Level): Scope {
    return new Scope([...this.levels, level], this.foldCase);
  }

  private eq(a: string, b: string): boolean {
    return this.foldCase ? a.toLowerCase() === b.toLowerCase() : a === b;
  }

  private has(entry: Entry, column: string): boolean {
    const names = entry.kind === 'base' ? entry.colNames : entry.columns;
    return names?.some((n) => this.eq(n, column)) ?? false;
  }

  private baseColumn(entry: BaseEntry, column: string): Resolution {
    const i = entry.colNames.findIndex((n) => this.eq(n, column));
    const col = i >= 0 ? entry.rel.columns[i] : undefined;
    if (!col) throw new UnknownColumnError([entry.refName, column], this.foldCase);
    return { kind: 'base', entry, column: col };
  }

  /** `qualifier.column` (qualifier: [table] or [schema, table]). */
  resolveQualified(qualifier: string[], column: string): Resolution {
    const entry = this.findEntry(qualifier);
    if (!entry) {
      // The server's words: Postgres names the missing FROM entry, MySQL the column as written.
      if (this.foldCase) throw new UnknownColumnError([...qualifier, column], true);
      throw new UnknownObjectError(`missing FROM-clause entry for table "${qualifier.at(-1)}"`);
    }
    return entry.kind === 'base' ? this.baseColumn(entry, column) : { kind: 'derived' };
  }

  /**
   * The FROM item a qualifier names, innermost level first. MySQL compares table aliases (and,
   * with lower_case_table_names=0, table names) by exact case, column names without: where the
   * exact and the case-folded reading of a qualifier pick different items, the server's setting
   * decides which one it reads, so the reference is refused.
   */
  findEntry(qualifier: string[]): Entry | null {
    const found = this.findEntryBy(qualifier, this.foldCase);
    if (this.foldCase && this.findEntryBy(qualifier, false) !== found)
      throw new ProtectionRefusedError(
        `${qualifier.join('.')} names a table whose alias differs only in case from another's; give them distinct names`,
      );
    return found;
  }

  private findEntryBy(qualifier: string[], foldCase: boolean): Entry | null {
    const eq = (a: string, b: string) => (foldCase ? a.toLowerCase() === b.toLowerCase() : a === b);
    const table = qualifier[qualifier.length - 1]!;
    const schema = qualifier.length >= 2 ? qualifier[qualifier.length - 2]! : null;
    if (qualifier.length > 3)
      throw new ProtectionRefusedError(`the reference ${qualifier.join('.')} is not supported`);
    for (let l = this.levels.length - 1; l >= 0; l--) {
      for (const e of this.levels[l]!.entries) {
        if (!eq(e.refName, table)) continue;
        if (schema !== null && !(e.kind === 'base' && e.schemaQualifier !== null && eq(e.rel.schema, schema)))
          continue;
        return e;
      }
    }
    return null;
  }

  /**
   * An unqualified name: a column of the innermost level that has one, else a whole-row
   * reference to a FROM item (Postgres). A whole row of a table is refused: it would carry
   * every column past the rewriter (`row_to_json(u)`, `to_jsonb(u)`).
   */
  resolveBare(name: string, wholeRowAllowed: boolean): Resolution {
    let opaque = false;
    for (let l = this.levels.length - 1; l >= 0; l--) {
      const level = this.levels[l]!;
      if ([...level.using].some((u) => this.eq(u, name))) return { kind: 'derived' };
      const matches = level.entries.filter((e) => this.has(e, name));
      if (matches.length > 1) throw new ProtectionRefusedError(`column reference "${name}" is ambiguous`);
      const [m] = matches;
      if (m) return m.kind === 'base' ? this.baseColumn(m, name) : { kind: 'derived' };
      opaque ||= level.entries.some((e) => e.kind === 'derived' && e.columns === null);
    }
    if (wholeRowAllowed) {
      const entry = this.findEntry([name]);
      if (entry?.kind === 'base') {
        throw new ProtectionRefusedError(
          `the whole-row reference to ${name} would expose every column of ${entry.rel.name}`,
        );
      }
      if (entry) return { kind: 'derived' };
    }
    // A table function's columns are not known; the name is one of them (no base table has it).
    if (opaque) return { kind: 'derived' };
    throw new UnknownColumnError([name], this.foldCase);
  }

  /** Every entry of the innermost level in FROM order. */
  get innermost(): Level | undefined {
    return this.levels[this.levels.length - 1];
  }
}

/** A base entry for a relation, with optional column aliases. */
export function baseEntry(
  rel: RelationInfo,
  alias: string | null,
  colAliases: string[],
  schemaQualifier: string | null,
): BaseEntry {
  if (colAliases.length > rel.columns.length) {
    throw new ProtectionRefusedError(`${rel.name} has fewer columns than the aliases given`);
  }
  const colNames = rel.columns.map((c, i) => colAliases[i] ?? c.name);
  return {
    kind: 'base',
    refName: alias ?? rel.name,
    schemaQualifier: alias ? null : schemaQualifier,
    rel,
    colNames,
  };
}
