// Small helpers over libpg-query's JSON parse tree: a node is a one-key wrapper
// `{ Kind: fields }`; fields hold wrappers, lists of wrappers, plain structs and scalars.
import { parsePostgres } from './parse.ts';

export type Fields = Record<string, unknown>;
export type PgNode = Record<string, Fields>;

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
    const [stmt] = parsePostgres(`SELECT ${text}`).stmts ?? [];
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

const XML_NAMES: Record<string, string> = {
  IS_XMLCONCAT: 'xmlconcat',
  IS_XMLELEMENT: 'xmlelement',
  IS_XMLFOREST: 'xmlforest',
  IS_XMLPARSE: 'xmlparse',
  IS_XMLPI: 'xmlpi',
  IS_XMLROOT: 'xmlroot',
  IS_XMLSERIALIZE: 'xmlserialize',
};

/**
 * The output name Postgres gives an unnamed select-list expression (FigureColname in
 * parse_target.c): the rewriter names every rewritten output with it, so a result keeps the
 * name the statement as written would have had, and outer references resolve as on the server.
 */
export function figureName(n: unknown): string {
  return figure(n)?.[0] ?? '?column?';
}

/** [name, strength]: 2 for a column or function name, 1 for a type or CASE, as the server ranks them. */
function figure(n: unknown): [string, number] | null {
  const kind = kindOf(n);
  if (!kind) return null;
  const f = (n as PgNode)[kind]!;
  const strong = (name: string): [string, number] => [name, 2];
  switch (kind) {
    case 'ColumnRef': {
      const last = list(f.fields)
        .map(sval)
        .filter((x): x is string => x !== null)
        .at(-1);
      return last === undefined ? null : strong(last);
    }
    case 'A_Indirection': {
      const last = list(f.indirection)
        .map(sval)
        .filter((x): x is string => x !== null)
        .at(-1);
      return last === undefined ? figure(f.arg) : strong(last);
    }
    case 'FuncCall':
      return strong(names(f.funcname).at(-1) ?? '?column?');
    case 'A_Expr':
      return f.kind === 'AEXPR_NULLIF' ? strong('nullif') : null;
    case 'TypeCast': {
      const inner = figure(f.arg);
      if (inner && inner[1] > 1) return inner;
      const typeName = names((f.typeName as Fields | undefined)?.names).at(-1);
      return typeName ? [typeName, 1] : inner;
    }
    case 'CollateClause':
      return figure(f.arg);
    case 'GroupingFunc':
      return strong('grouping');
    case 'SubLink': {
      if (f.subLinkType === 'EXISTS_SUBLINK') return strong('exists');
      if (f.subLinkType === 'ARRAY_SUBLINK') return strong('array');
      if (f.subLinkType !== 'EXPR_SUBLINK') return null;
      const rt = as(list(as(f.subselect, 'SelectStmt')?.targetList)[0], 'ResTarget');
      if (!rt) return null;
      return typeof rt.name === 'string' ? strong(rt.name) : figure(rt.val);
    }
    case 'CaseExpr': {
      const inner = figure(f.defresult);
      return inner && inner[1] > 1 ? inner : ['case', 1];
    }
    case 'A_ArrayExpr':
      return strong('array');
    case 'RowExpr':
      return strong('row');
    case 'CoalesceExpr':
      return strong('coalesce');
    case 'MinMaxExpr':
      return strong(f.op === 'IS_GREATEST' ? 'greatest' : 'least');
    case 'SQLValueFunction': {
      const name = SVF_NAMES[String(f.op)];
      return name ? strong(name) : null;
    }
    case 'XmlExpr': {
      const name = XML_NAMES[String(f.op)];
      return name ? strong(name) : null;
    }
    case 'XmlSerialize':
      return strong('xmlserialize');
    default:
      return null;
  }
}
