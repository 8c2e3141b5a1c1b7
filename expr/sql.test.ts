// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are template source.
import { describe, expect, it } from 'vitest';
import { ExprError, type ExprErrorCode } from './errors.ts';
import type { EvalContext } from './evaluate.ts';
import { renderSql, SQL_STYLES, type SqlStyle } from './sql.ts';

const ctx: EvalContext = {
  inputs: {
    name: "O'Brien'; DROP TABLE users; --",
    id: 42,
    big: 2 ** 53,
    ratio: 0.5,
    active: true,
    none: null,
    list: [1, 2],
    obj: { a: 1 },
  },
  steps: { q: { status: 'succeeded', output: { rows: [[7, 'x']], num_rows: 1 } } },
};

function sqlError(source: string, style: SqlStyle): ExprError {
  try {
    renderSql(source, ctx, style);
  } catch (err) {
    if (err instanceof ExprError) return err;
    throw err;
  }
  throw new Error(`expected ${source} to fail for ${style}`);
}

const QUERY =
  'SELECT * FROM users WHERE name = ${name} AND id = ${id} AND r > ${ratio} AND a = ${active} OR x IS ${none}';

describe('placeholder styles', () => {
  const params = [ctx.inputs.name, 42, 0.5, true, null];
  it.each([
    ['postgres', 'SELECT * FROM users WHERE name = $1 AND id = $2 AND r > $3 AND a = $4 OR x IS $5'],
    ['mysql', 'SELECT * FROM users WHERE name = ? AND id = ? AND r > ? AND a = ? OR x IS ?'],
    [
      'clickhouse',
      'SELECT * FROM users WHERE name = {p1:String} AND id = {p2:Int64} AND r > {p3:Float64} AND a = {p4:Bool} OR x IS {p5:Nullable(String)}',
    ],
    ['sqlserver', 'SELECT * FROM users WHERE name = @p1 AND id = @p2 AND r > @p3 AND a = @p4 OR x IS @p5'],
    ['oracle', 'SELECT * FROM users WHERE name = :1 AND id = :2 AND r > :3 AND a = :4 OR x IS :5'],
  ] as const)('%s', (style, text) => {
    const out = renderSql(QUERY, ctx, style);
    expect(out.text).toBe(text);
    expect(out.params).toEqual(params);
    if (style === 'clickhouse')
      expect(out.namedParams).toEqual({ p1: params[0], p2: 42, p3: 0.5, p4: true, p5: null });
    else expect(out.namedParams).toBeUndefined();
  });

  it('ClickHouse types integers beyond 2^53 as Float64', () => {
    expect(renderSql('SELECT ${big}', ctx, 'clickhouse').text).toBe('SELECT {p1:Float64}');
  });

  it('each ${} is its own parameter, even when repeated', () => {
    expect(renderSql('${id} + ${id}', ctx, 'postgres')).toEqual({ text: '$1 + $2', params: [42, 42] });
  });

  it('step outputs and whole expressions bind as values', () => {
    expect(renderSql('SELECT ${step.q.output.rows[0][0]}, ${id > 40}', ctx, 'postgres')).toEqual({
      text: 'SELECT $1, $2',
      params: [7, true],
    });
  });

  it('a query without ${} is unchanged', () => {
    expect(renderSql('SELECT 1', ctx, 'mysql')).toEqual({ text: 'SELECT 1', params: [] });
  });

  it('a placeholder never merges with its neighbours', () => {
    expect(renderSql('SELECT ${id}0, a${id}, ${id}::int, (${id})', ctx, 'postgres').text).toBe(
      'SELECT $1 0, a $2, $3::int, ($4)',
    );
    expect(renderSql('SELECT x${id}y', ctx, 'oracle').text).toBe('SELECT x :1 y');
  });

  it('values never enter the text', () => {
    for (const style of SQL_STYLES) {
      const out = renderSql(QUERY, ctx, style);
      expect(out.text).not.toContain('DROP');
      expect(out.params[0]).toBe(ctx.inputs.name);
    }
  });

  it('$${ is the literal text ${ and binds nothing', () => {
    expect(renderSql("SELECT '$${name}'", ctx, 'postgres')).toEqual({ text: "SELECT '${name}'", params: [] });
  });
});

describe('${} inside quotes or comments is refused, never spliced', () => {
  const cases: Array<[string, SqlStyle[], string]> = [
    ["SELECT * FROM t WHERE a LIKE '%${name}%'", [...SQL_STYLES], 'string literal'],
    ["SELECT 'it''s ${name}'", [...SQL_STYLES], 'string literal'],
    ['SELECT "${name}" FROM t', ['postgres', 'clickhouse', 'sqlserver', 'oracle'], 'quoted identifier'],
    ['SELECT "${name}"', ['mysql'], 'string literal'],
    ['SELECT `${name}` FROM t', ['mysql', 'clickhouse'], 'quoted identifier'],
    ['SELECT [${name}] FROM t', ['sqlserver'], 'quoted identifier'],
    ['SELECT 1 -- ${name}', [...SQL_STYLES], 'comment'],
    ['SELECT 1 /* ${name} */', [...SQL_STYLES], 'comment'],
    ['SELECT 1 /* /* */ ${name} */', ['postgres', 'sqlserver'], 'comment'],
    ['SELECT 1 # ${name}', ['mysql', 'clickhouse'], 'comment'],
    ['SELECT $$ ${name} $$', ['postgres'], 'string literal'],
    ['SELECT $fn$ $$ ${name} $fn$', ['postgres'], 'string literal'],
    ["SELECT E'it\\'s ${name}'", ['postgres'], 'string literal'],
    ["SELECT 'it\\'s ${name}'", ['mysql', 'clickhouse'], 'string literal'],
    ["SELECT q'[it's ${name}]'", ['oracle'], 'string literal'],
    ["SELECT Nq'{it's ${name}}'", ['oracle'], 'string literal'],
  ];
  for (const [source, styles, what] of cases) {
    it.each(styles)(`${source} (%s)`, (style) => {
      const err = sqlError(source, style);
      expect(err.code).toBe('sql_quoted_reference');
      expect(err.position).toBe(source.indexOf('${'));
      expect(err.message).toContain(
        `inside a ${what.includes('comment') ? 'SQL comment' : what === 'string literal' ? 'SQL string literal' : what}`,
      );
    });
  }

  it('the message says where the quote opened and how to write it instead', () => {
    expect(sqlError("SELECT * FROM t WHERE a LIKE '%${name}%'", 'postgres').message).toBe(
      'this ${} is inside a SQL string literal (opened at column 30), where its value would become SQL text; ' +
        "put it outside the quotes so it is bound as a parameter, e.g. '%' || ${q} || '%' (column 32)",
    );
    expect(sqlError("SELECT '%${name}%'", 'mysql').message).toContain("CONCAT('%', ${q}, '%')");
    expect(sqlError("SELECT '%${name}%'", 'sqlserver').message).toContain("'%' + ${q} + '%'");
    expect(sqlError('SELECT 1\n-- note ${name}', 'postgres').message).toMatch(
      /opened at line 2, column 1\).*line 2, column 9/,
    );
  });

  it('outside quotes and comments, the same constructs bind', () => {
    const binds: Array<[string, SqlStyle]> = [
      ["SELECT * FROM t WHERE a LIKE '%' || ${name} || '%'", 'postgres'],
      ["SELECT 'it''s', ${name}", 'postgres'],
      ["SELECT 'it\\', ${name}", 'postgres'],
      ["SELECT 'it\\\\', ${name}", 'mysql'],
      ['SELECT "a""b", ${name}', 'postgres'],
      ['SELECT arr[${id}]', 'postgres'],
      ['SELECT a # ${id}', 'postgres'],
      ['SELECT a--b, ${id}', 'mysql'],
      ['SELECT 1 -- c\n, ${id}', 'postgres'],
      ['SELECT 1 /* c */ , ${id}', 'sqlserver'],
      ['SELECT 1 /* /* */ , ${id}', 'mysql'],
      ['SELECT $$ x $$, ${id}', 'postgres'],
      ['SELECT a$b$c, ${id}', 'postgres'],
      ["SELECT q'[it's]', ${id}", 'oracle'],
      ['SELECT `a`, ${id}', 'mysql'],
      ['SELECT [a]]b], ${id}', 'sqlserver'],
    ];
    for (const [source, style] of binds) {
      expect(renderSql(source, ctx, style).params, `${source} (${style})`).toHaveLength(1);
    }
  });

  it('an unterminated quote after the last ${} is left to the database', () => {
    expect(renderSql("SELECT ${id}, 'open", ctx, 'postgres').text).toBe("SELECT $1, 'open");
  });
});

describe('placeholders written by hand are refused', () => {
  it.each([
    ['SELECT * FROM t WHERE id = $1', 'postgres', 27, '$1'],
    ['SELECT * FROM t WHERE id = ?', 'mysql', 27, '?'],
    ['SELECT * FROM t WHERE id = :id', 'oracle', 27, ':id'],
    ['SELECT * FROM t WHERE id = :1', 'oracle', 27, ':1'],
    ['SELECT * FROM t WHERE id = @p1', 'sqlserver', 27, '@p1'],
    ['SELECT * FROM t WHERE id = {id:UInt32}', 'clickhouse', 27, '{id:UInt32}'],
    ['SELECT ${id}, $2', 'postgres', 14, '$2'],
  ] as const)('%s (%s)', (source, style, position, text) => {
    const err = sqlError(source, style);
    expect(err.code).toBe('sql_raw_placeholder');
    expect(err.position).toBe(position);
    expect(err.message).toContain(`placeholder ${text} written by hand`);
  });

  it('look-alikes that are not placeholders pass', () => {
    const fine: Array<[string, SqlStyle]> = [
      ["SELECT '$1', '?' -- $1 ?", 'postgres'],
      ["SELECT data ? 'key'", 'postgres'],
      ['SELECT a$1', 'postgres'],
      ['SELECT \'?\', "?" # ?', 'mysql'],
      ['DECLARE @name int; SELECT @name, @@ROWCOUNT', 'sqlserver'],
      ["SELECT to_char(d, 'HH24:MI')", 'oracle'],
      ["SELECT {'a': 1}", 'clickhouse'],
      ['SELECT x::int', 'postgres'],
    ];
    for (const [source, style] of fine) {
      expect(() => renderSql(source, ctx, style), `${source} (${style})`).not.toThrow();
    }
  });
});

describe('values that cannot be one parameter', () => {
  it.each([
    ['${list}', 'sql_unbindable_value', /a list of 2 cannot be one SQL parameter/],
    ['${obj}', 'sql_unbindable_value', /an object cannot be one SQL parameter/],
    ['${missing}', 'unknown_input', /no input named 'missing'/],
  ] as const)('%s', (ref, code: ExprErrorCode, message) => {
    const source = `SELECT * FROM t WHERE id = ${ref}`;
    const err = sqlError(source, 'postgres');
    expect(err.code).toBe(code);
    expect(err.position).toBeGreaterThanOrEqual(27);
    expect(err.message).toMatch(message);
  });

  it('non-JSON values are refused on read', () => {
    expect(() => renderSql('SELECT ${n}', { inputs: { n: Number.NaN }, steps: {} }, 'postgres')).toThrow(
      ExprError,
    );
  });
});
