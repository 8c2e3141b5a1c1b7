import { describeLocation, ExprError } from './errors.ts';
import { type EvalContext, evalNode, locate } from './evaluate.ts';
import { type Construct, type SqlStyle, scanSql } from './sql-scan.ts';
import { sourceOffset, type Template, toTemplate } from './template.ts';
import { describe } from './values.ts';

/** Placeholder style of the target adapter: `$1` postgres, `?` mysql, `{p1:Type}` clickhouse,
 *  `@p1` sqlserver, `:1` oracle. */
export type { SqlStyle } from './sql-scan.ts';

export const SQL_STYLES: readonly SqlStyle[] = ['postgres', 'mysql', 'clickhouse', 'sqlserver', 'oracle'];

/** A value bound as one SQL parameter. */
export type SqlParam = string | number | boolean | null;

export interface SqlQuery {
  /** The template's own text with a placeholder for each `${}`; never a value. */
  text: string;
  /** Parameter values in placeholder order (`$1` is params[0]). */
  params: SqlParam[];
  /** ClickHouse only: the same values by placeholder name (`p1`, `p2`, ...) for `query_params`. */
  namedParams?: Record<string, SqlParam>;
}

/**
 * Renders a SQL template (query strings): every `${}` becomes a bound parameter in the adapter's
 * placeholder style; no value is ever spliced into the text (DESIGN.md, governed query pipeline 4).
 *
 * A `${}` inside a string literal, quoted identifier or comment is refused (`sql_quoted_reference`),
 * not bound: a placeholder there would be text to the database, and splicing would be injection.
 * `'%${q}%'` must be written `'%' || ${q} || '%'` (MySQL: `CONCAT('%', ${q}, '%')`). A placeholder
 * written by hand (`$1`, `?`, ...) is refused too (`sql_raw_placeholder`): it would take the place
 * of a `${}`'s value. Lists and objects cannot be one parameter (`sql_unbindable_value`).
 */
export function renderSql(template: string | Template, ctx: EvalContext, style: SqlStyle): SqlQuery {
  const t = toTemplate(template);
  const params: SqlParam[] = [];
  let text = '';
  t.parts.forEach((part, i) => {
    if (part.kind === 'text') {
      const scan = scanSql(part.text, style);
      if (scan.kind === 'placeholder') {
        throw new ExprError(
          'sql_raw_placeholder',
          `the query contains the placeholder ${scan.text} written by hand; write each value as \${...} so it is bound`,
          sourceOffset(t, part, scan.index),
          t.source,
        );
      }
      if (scan.kind === 'open' && t.parts[i + 1] !== undefined) {
        const opened = describeLocation(t.source, sourceOffset(t, part, scan.index));
        throw new ExprError(
          'sql_quoted_reference',
          quotedReference(scan.what, opened, style),
          t.parts[i + 1]!.pos,
          t.source,
        );
      }
      text += part.text;
      return;
    }
    let value: unknown;
    try {
      value = evalNode(part.expr, ctx);
    } catch (err) {
      throw locate(err, t.source);
    }
    const param = toParam(value, part.pos, t.source);
    params.push(param);
    const ph = placeholder(style, params.length, param);
    // A placeholder never merges with its neighbours: `${x}0` must not become `$10`.
    const before = text.length > 0 && JOINS_BEFORE.test(text[text.length - 1]!) ? ' ' : '';
    const nextPart = t.parts[i + 1];
    const after = nextPart?.kind === 'text' && JOINS_AFTER.test(nextPart.text[0]!) ? ' ' : '';
    text += before + ph + after;
  });
  if (style !== 'clickhouse') return { text, params };
  const namedParams: Record<string, SqlParam> = {};
  params.forEach((value, i) => {
    namedParams[`p${i + 1}`] = value;
  });
  return { text, params, namedParams };
}

// Characters that would fuse with a placeholder into one token (`a$1`, `$10`, `::1`).
const JOINS_BEFORE = /[\p{L}\p{N}_$#@:?{}]/u;
const JOINS_AFTER = /[\p{L}\p{N}_$#@?{}]/u;

/** The placeholder for the 1-based parameter `index` in `style`. */
export function placeholder(style: SqlStyle, index: number, value: SqlParam): string {
  switch (style) {
    case 'postgres':
      return `$${index}`;
    case 'mysql':
      return '?';
    case 'clickhouse':
      return `{p${index}:${clickhouseType(value)}}`;
    case 'sqlserver':
      return `@p${index}`;
    case 'oracle':
      return `:${index}`;
  }
}

/** ClickHouse parameter type derived from the value. */
export function clickhouseType(value: SqlParam): string {
  switch (typeof value) {
    case 'string':
      return 'String';
    case 'boolean':
      return 'Bool';
    case 'number':
      return Number.isSafeInteger(value) ? 'Int64' : 'Float64';
    default:
      return 'Nullable(String)';
  }
}

function toParam(value: unknown, pos: number, source: string): SqlParam {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return Object.is(value, -0) ? 0 : value;
      break;
    case 'object':
      if (value === null) return null;
      throw new ExprError(
        'sql_unbindable_value',
        `${describe(value)} cannot be one SQL parameter; reference a single field or item, e.g. rows[0][0]`,
        pos,
        source,
      );
  }
  throw new ExprError('sql_unbindable_value', `${describe(value)} cannot be a SQL parameter`, pos, source);
}

function quotedReference(what: Construct, opened: string, style: SqlStyle): string {
  if (what === 'comment') {
    return `this \${} is inside a SQL comment (opened at ${opened}); remove it, or write $\${ for the literal text`;
  }
  if (what === 'identifier') {
    return `this \${} is inside a quoted identifier (opened at ${opened}); table and column names cannot be parameters`;
  }
  const concat =
    style === 'mysql'
      ? `CONCAT('%', \${q}, '%')`
      : style === 'sqlserver'
        ? `'%' + \${q} + '%'`
        : `'%' || \${q} || '%'`;
  return (
    `this \${} is inside a SQL string literal (opened at ${opened}), where its value would become SQL ` +
    `text; put it outside the quotes so it is bound as a parameter, e.g. ${concat}`
  );
}
