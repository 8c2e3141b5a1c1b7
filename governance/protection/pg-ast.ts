// Small helpers over libpg-query's JSON parse tree: a node is a one-key wrapper
// `{ Kind: fields }`; fields hold wrappers, lists of wrappers, plain structs and scalars.
import { loadModule, parseSync } from 'libpg-query';
import { ProtectionParseError } from './rules.ts';

export type Fields = Record<string, unknown>;
export type PgNode = Record<string, Fields>;

let loaded: Promise<void> | null = null;
/** Loads the WASM parser once per process. */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

export function isObj(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The kind of a wrapper node (`ColumnRef`), or null for a plain struct. */
export function kindOf(n: unknown): string | null {
  if (!isObj(n)) return null;
  const keys = Object.keys(n);
  return keys.length === 1 && /^[A-Z]/.test(keys[0]!) && isObj(n[keys[0]!]) ? keys[0]! : null;
}

/** The fields of a wrapper of the given kind, or null. */
export function as(n: unknown, kind: string): Fields | null {
  return isObj(n) && kindOf(n) === kind ? (n[kind] as Fields) : null;
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `String` node value. */
export function sval(n: unknown): string | null {
  const s = as(n, 'String');
  return s && typeof s.sval === 'string' ? s.sval : null;
}

/** Names of a list of `String` nodes (function names, USING lists, column aliases). */
export function names(v: unknown): string[] {
  return list(v).map((n) => sval(n) ?? '');
}

/** Parses SQL text; a parse error is reported with the parser's message. */
export function parsePg(sql: string): { stmts: Array<{ stmt: unknown }> } {
  try {
    return parseSync(sql) as unknown as { stmts: Array<{ stmt: unknown }> };
  } catch (err) {
    throw new ProtectionParseError(
      `the statement could not be parsed: ${err instanceof Error ? err.message : 'syntax error'}`,
    );
  }
}

/** Double-quoted identifier (always quoted: case and keywords survive). */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Single-quoted literal with standard_conforming_strings (the server default since 9.1). */
export function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const exprCache = new Map<string, unknown>();
/** The parse tree of one scalar expression, parsed once per text. */
export function parseExpr(text: string): unknown {
  let node = exprCache.get(text);
  if (node === undefined) {
    const [stmt] = parsePg(`SELECT ${text}`).stmts;
    const target = list(as(stmt?.stmt, 'SelectStmt')?.targetList)[0];
    node = as(target, 'ResTarget')?.val;
    if (node === undefined) throw new Error(`not an expression: ${text}`);
    if (exprCache.size > 5000) exprCache.clear();
    exprCache.set(text, node);
  }
  return structuredClone(node);
}

const SVF_NAMES: Record<string, string> = {
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_USER: 'user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
};

/**
 * The output name Postgres gives an unnamed select-list expression (FigureColname in
 * parse_target.c), closely enough: the rewriter names every inner output explicitly with it,
 * so the names it resolves against are the names the server uses.
 */
export function figureName(n: unknown): string {
  const kind = kindOf(n);
  const f = kind ? (n as PgNode)[kind]! : {};
  switch (kind) {
    case 'ColumnRef': {
      const last = list(f.fields).at(-1);
      return sval(last) ?? '?column?';
    }
    case 'A_Indirection': {
      const last = list(f.indirection).at(-1);
      return sval(last) ?? figureName(f.arg);
    }
    case 'FuncCall':
      return names(f.funcname).at(-1) ?? '?column?';
    case 'A_Expr':
      return f.kind === 'AEXPR_NULLIF' ? 'nullif' : '?column?';
    case 'TypeCast':
    case 'CollateClause': {
      const inner = figureName(f.arg);
      if (inner !== '?column?' || kind === 'CollateClause') return inner;
      const typeNames = names((f.typeName as Fields | undefined)?.names);
      return typeNames.at(-1) ?? '?column?';
    }
    case 'SubLink': {
      if (f.subLinkType === 'EXISTS_SUBLINK') return 'exists';
      if (f.subLinkType === 'ARRAY_SUBLINK') return 'array';
      if (f.subLinkType === 'EXPR_SUBLINK') {
        const target = list(as(f.subselect, 'SelectStmt')?.targetList)[0];
        const rt = as(target, 'ResTarget');
        return rt ? (typeof rt.name === 'string' ? rt.name : figureName(rt.val)) : '?column?';
      }
      return '?column?';
    }
    case 'CaseExpr':
      return 'case';
    case 'A_ArrayExpr':
      return 'array';
    case 'RowExpr':
      return 'row';
    case 'CoalesceExpr':
      return 'coalesce';
    case 'MinMaxExpr':
      return f.op === 'IS_GREATEST' ? 'greatest' : 'least';
    case 'GroupingFunc':
      return 'grouping';
    case 'SQLValueFunction':
      return SVF_NAMES[String(f.op)] ?? '?column?';
    default:
      return '?column?';
  }
}
