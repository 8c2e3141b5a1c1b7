import { AppError } from '../../core/errors.ts';
import type { RelationInfo } from '../../sql/catalog.ts';
import type { RuleAction, RuleRow } from '../../store/data-protection.ts';

/** What the policy does to one column. `show` leaves it; every other kind replaces it. */
export interface ColumnTreatment {
  action: RuleAction;
  keepFirst: number;
  keepLast: number;
}

/** The constant every `mask` (and the middle of every `partial`) becomes. */
export const MASK = '****';

const SHOW: ColumnTreatment = { action: 'show', keepFirst: 0, keepLast: 0 };
const HIDE: ColumnTreatment = { action: 'hide', keepFirst: 0, keepLast: 0 };

/**
 * A policy's rules, indexed for lookup. The most specific rule wins: a named column over
 * the table's '*', a rule with a schema over one without. A column that no rule names is
 * hidden (default deny).
 */
export class RuleBook {
  private readonly byKey = new Map<string, ColumnTreatment>();
  /** `table.column` of every column a lookup found no rule for (hidden by default), in order. */
  readonly hiddenByDefault = new Set<string>();

  constructor(
    readonly policyId: string,
    readonly salt: string,
    rules: RuleRow[],
    /** MySQL compares column and table names case-insensitively. */
    readonly foldCase = false,
    /**
     * The statement is an undo's inverse: the values it writes are the rows its write kept,
     * bound at run time, never the author's (governance/undo), so a hashed column may be written.
     */
    readonly restoresKeptRows = false,
  ) {
    for (const r of rules) {
      this.byKey.set(this.key(r.schema_name, r.table_name, r.column_name), {
        action: r.action,
        keepFirst: r.keep_first,
        keepLast: r.keep_last,
      });
    }
  }

  private key(schema: string | null, table: string, column: string): string {
    const k = JSON.stringify([schema, table, column]);
    return this.foldCase ? k.toLowerCase() : k;
  }

  /** The treatment of `schema.table.column` under this policy. */
  treatment(schema: string, table: string, column: string): ColumnTreatment {
    const found =
      this.byKey.get(this.key(schema, table, column)) ??
      this.byKey.get(this.key(null, table, column)) ??
      this.byKey.get(this.key(schema, table, '*')) ??
      this.byKey.get(this.key(null, table, '*'));
    if (found) return found;
    this.hiddenByDefault.add(`${table}.${column}`);
    return HIDE;
  }

  /** Whether a treatment is the default for a column no rule names (not a `hide` rule). */
  static isDefault(t: ColumnTreatment): boolean {
    return t === HIDE;
  }

  isShown(schema: string, table: string, column: string): boolean {
    return this.treatment(schema, table, column).action === 'show';
  }
}

export const SHOWN = SHOW;

/**
 * The policy as a write reads it: nothing is masked, because a masked value written back
 * would corrupt the data, so a write that reads a column the policy does not show is refused,
 * naming the column and the clause that reads it (README "Writes under a policy"). Assigning
 * to a protected column is not a read and never reaches `treatment`; `assigned` checks where
 * the value lands.
 */
export class WriteReads extends RuleBook {
  /** The clause being analyzed, as the refusal names it (`the WHERE clause`). */
  clause = 'the statement';

  constructor(
    private readonly inner: RuleBook,
    /** The statement's name in refusals (`UPDATE`). */
    readonly statement: string,
  ) {
    super(inner.policyId, inner.salt, [], inner.foldCase);
  }

  override treatment(schema: string, table: string, column: string): ColumnTreatment {
    const t = this.inner.treatment(schema, table, column);
    if (t.action !== 'show') throw this.refusal(table, column);
    return t;
  }

  /**
   * A column the write assigns. A hashed column is the one treatment that answers equality
   * (`a.ssn = b.ssn` compares the two hashes): a guess written into it could be matched against
   * the stored values by a join, so under the policy it is not written. The same value reaches
   * a table through a view on it, or through a partition or child its scans read, where the
   * table's rules apply and the written name's do not: no value goes through a view, nor into a
   * column of a child the policy does not show.
   */
  assigned(rel: RelationInfo, column: string): void {
    if (this.inner.restoresKeptRows) return;
    if (rel.kind === 'view')
      throw new ProtectionRefusedError(
        `${this.statement} writes through the view ${rel.name}: under a data-protection policy the rules of the table behind it cannot be checked; write to the table`,
      );
    const action = this.inner.treatment(rel.schema, rel.name, column).action;
    if (rel.inherits && action !== 'show')
      throw new ProtectionRefusedError(
        `${this.statement} writes ${rel.name}.${column}, a column your policy does not show, of a partition or child table: its rows are also read as its parent's; write to the parent`,
      );
    if (action === 'hash')
      throw new ProtectionRefusedError(
        `${this.statement} writes ${rel.name}.${column}, which your data-protection policy shows hashed: a value written there could be matched against the stored ones; ask for the column to be hidden or masked for you instead`,
      );
  }

  refusal(table: string, column: string): ProtectionRefusedError {
    return new ProtectionRefusedError(
      `${this.statement} reads the protected column ${table}.${column} in ${this.clause}; a write may assign a literal or a parameter to a protected column, never read one`,
    );
  }
}

/**
 * The query was refused because a data-protection policy applies and the statement uses a
 * construct whose result could not be proven free of protected values (fail closed).
 */
export class ProtectionRefusedError extends AppError {
  constructor(reason: string) {
    super(403, 'protection-refused', 'Refused by data protection', `data protection: ${reason}`);
  }
}

/** The statement could not be parsed; under a policy an unparsable statement never runs. */
export class ProtectionParseError extends AppError {
  constructor(reason: string) {
    super(422, 'protection-unparsable', 'Statement not analyzable', `data protection: ${reason}`);
  }
}

/**
 * An error the database itself would have raised (an unknown column, table or function), said
 * in the server's words: data protection is not the reason the statement cannot run, so the
 * message does not mention it.
 */
export class ServerStyleError extends AppError {
  constructor(message: string) {
    super(422, 'query-failed', 'Query failed', message);
  }
}

/**
 * A relation, column or function the cached schema does not know: the schema may have changed
 * since it was read, so the caller reads it again once before answering as the server would.
 */
export class UnknownObjectError extends ServerStyleError {}

/**
 * A column no FROM item has, said as the server says it: Postgres `column "x" does not exist`,
 * MySQL `Unknown column 'x' in '<clause>'` (the MySQL rewriter fills in the clause).
 */
export class UnknownColumnError extends UnknownObjectError {
  constructor(
    readonly parts: string[],
    mysql: boolean,
    clause = 'field list',
  ) {
    super(
      mysql
        ? `Unknown column '${parts.join('.')}' in '${clause}'`
        : parts.length === 1
          ? `column "${parts[0]}" does not exist`
          : `column ${parts.join('.')} does not exist`,
    );
  }
}
