// How the Postgres rewriter masks: the expression that replaces a reference to a protected column
// (by its treatment in the policy), and the expansion of `*` into one masked target per column.
import { ident, literal, parseExpr } from '../../sql/pg-tree.ts';
import type { FromTree } from './pg-from.ts';
import { MASK, ProtectionRefusedError, type RuleBook } from './rules.ts';
import type { BaseEntry, Entry } from './scope.ts';

/** The targets `*` stands for over one FROM tree, USING columns merged as the server does. */
export function expandTree(rules: RuleBook, tree: FromTree): unknown[] {
  if ('entry' in tree) return expandEntry(rules, tree.entry);
  if (tree.using.length === 0) return [...expandTree(rules, tree.left), ...expandTree(rules, tree.right)];
  // USING columns come first, once, then each side's other columns.
  const sides = [tree.left, tree.right].map((side) => {
    if (!('entry' in side) || side.entry.kind !== 'base') {
      throw new ProtectionRefusedError(
        '* over a JOIN USING of a subquery or of another join is not supported: list the columns',
      );
    }
    return side.entry;
  });
  const rest = sides.flatMap((e) => expandEntry(rules, e, new Set(tree.using)));
  // The merged column, qualified so a later join cannot make it ambiguous: the left side's
  // value for inner and left joins, the right side's for right joins, either for full ones.
  const merged = (u: string): unknown => {
    const [l, r] = sides.map((e) => columnRef(e.refName, u));
    if (tree.joinType === 'JOIN_FULL') return { CoalesceExpr: { args: [l, r] } };
    return tree.joinType === 'JOIN_RIGHT' ? r : l;
  };
  return [...tree.using.map((u) => target(u, merged(u))), ...rest];
}

/** The names of the outputs `*` stands for over one FROM tree, in expandTree's order (null: not known). */
export function treeNames(tree: FromTree): string[] | null {
  if ('entry' in tree) return entryNames(tree.entry);
  const using = new Set(tree.using);
  const sides = [treeNames(tree.left), treeNames(tree.right)];
  if (sides.some((s) => s === null)) return null;
  return [...tree.using, ...sides.flatMap((s) => s!.filter((n) => !using.has(n)))];
}

/** The names of the outputs `alias.*` stands for: the server expands it to the entry's columns. */
export function entryNames(entry: Entry): string[] | null {
  return entry.kind === 'base' ? [...entry.colNames] : entry.columns && [...entry.columns];
}

/** The targets `alias.*` stands for: each column of a base entry masked, a derived one kept. */
export function expandEntry(rules: RuleBook, entry: Entry, skip = new Set<string>()): unknown[] {
  if (entry.kind === 'derived') {
    // A subquery's outputs are already safe; its own `alias.*` keeps the server's expansion.
    if (!entry.refName) throw new ProtectionRefusedError('* over an unaliased subquery is not supported');
    return [target(null, { ColumnRef: { fields: [{ String: { sval: entry.refName } }, { A_Star: {} }] } })];
  }
  return entry.colNames.flatMap((name, i) =>
    skip.has(name) ? [] : [target(name, protect(rules, entry, i, columnRef(entry.refName, name)))],
  );
}

/** The expression that replaces column `i` of a base entry (the reference itself when shown). */
export function protect(rules: RuleBook, entry: BaseEntry, i: number, ref: unknown): unknown {
  const col = entry.rel.columns[i]!;
  const t = rules.treatment(entry.rel.schema, entry.rel.name, col.name);
  const text = `(${ident(entry.refName)}.${ident(entry.colNames[i]!)})::text`;
  switch (t.action) {
    case 'show':
      return ref;
    case 'mask':
      return parseExpr(`${literal(MASK)}::text`);
    case 'hide':
      return hiddenNull(col.type);
    case 'hash':
      return parseExpr(`md5(${literal(`${rules.salt}:`)} || ${text})`);
    case 'partial':
      return parseExpr(
        `CASE WHEN length(${text}) > ${t.keepFirst + t.keepLast} THEN left(${text}, ${t.keepFirst}) || ${literal(MASK)} || right(${text}, ${t.keepLast}) ELSE ${literal(MASK)} END`,
      );
  }
}

/** A hidden column reads as NULL of its own type, so expressions over it still type-check. */
function hiddenNull(type: string): unknown {
  try {
    return parseExpr(`NULL::${type}`);
  } catch {
    return parseExpr('NULL::text');
  }
}

function columnRef(qualifier: string, name: string): unknown {
  return { ColumnRef: { fields: [{ String: { sval: qualifier } }, { String: { sval: name } }] } };
}

function target(name: string | null, val: unknown): unknown {
  return { ResTarget: name === null ? { val } : { name, val } };
}
