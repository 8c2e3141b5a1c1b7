// One parser per dialect, loaded on first use, and one bounded cache of parse trees per dialect.
// The governed path classifies a statement and then, under a data-protection policy, rewrites
// the same text: with the cache each dialect's parser reads it once. Trees handed out
// are shared and must not be edited; a caller that rewrites a tree takes `copy: true`
// (structuredClone costs less than a second parse, and leaves the cached tree intact).
import { createRequire } from 'node:module';
import type { Parser } from 'node-sql-parser';

export interface PgParseTree {
  stmts?: Array<{ stmt?: Record<string, unknown> }>;
}

/** The parser's own message, kept so that a cached failure reads like a fresh one. */
export class SqlParseError extends Error {
  constructor(
    message: string,
    /** node-sql-parser's `location` (line, column, offset), when it gave one. */
    readonly location?: { start?: { line?: number; column?: number; offset?: number } },
  ) {
    super(message);
    this.name = 'SqlParseError';
  }
}

/**
 * A parse tree takes about 75 times its text in memory (a 62 KB statement: 4.6 MB). The cache keeps
 * only statements up to CACHEABLE_CHARS and at most BUDGET_CHARS of text in all, so that distinct
 * large statements sent on purpose cannot fill the heap; a longer statement is parsed again where
 * it is read again (classification and the data-protection rewrite), as it was before the cache.
 */
const CACHEABLE_CHARS = 16 * 1024;
const BUDGET_CHARS = 512 * 1024;
type Entry = { tree: unknown } | { error: SqlParseError };

/** A bounded map, oldest out: dashboards and workflows repeat the same texts. */
class ParseCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  get(key: string, parse: () => unknown): unknown {
    let entry = this.entries.get(key);
    if (!entry) {
      try {
        entry = { tree: parse() };
      } catch (err) {
        const e = err as { message?: unknown; location?: SqlParseError['location'] };
        entry = { error: new SqlParseError(String(e?.message ?? 'syntax error'), e?.location) };
      }
      if (key.length <= CACHEABLE_CHARS) {
        while (this.chars + key.length > BUDGET_CHARS && this.entries.size > 0) {
          const oldest = this.entries.keys().next().value as string;
          this.entries.delete(oldest);
          this.chars -= oldest.length;
        }
        this.entries.set(key, entry);
        this.chars += key.length;
      }
    }
    if ('error' in entry) throw entry.error;
    return entry.tree;
  }
}

let pgParse: ((sql: string) => unknown) | null = null;
let pgDeparse: ((tree: unknown) => string) | null = null;
let pgLoading: Promise<void> | null = null;
const pgCache = new ParseCache();

/** Loads PostgreSQL's own parser (libpg-query, WASM) and its printer once per process, on first use. */
export function loadPostgresParser(): Promise<void> {
  pgLoading ??= Promise.all([import('libpg-query'), import('pgsql-deparser')]).then(async ([m, d]) => {
    await m.loadModule();
    pgParse = m.parseSync;
    pgDeparse = (tree) => d.deparseSync(tree as never) as string;
  });
  return pgLoading;
}

/** Prints a PostgreSQL parse tree back as SQL (pgsql-deparser); `loadPostgresParser()` must have resolved. */
export function deparsePostgres(tree: unknown): string {
  if (!pgDeparse) throw new Error('the PostgreSQL parser is not loaded (await loadPostgresParser())');
  return pgDeparse(tree);
}

/**
 * `SELECT <targets> FROM <from> [WHERE <where>]` printed from parse-tree pieces: how a write's own
 * FROM and WHERE become the read that shows (preview) or keeps (undo) the rows it touches.
 */
export function deparseSelect(targetList: unknown[], fromClause: unknown, whereClause?: unknown): string {
  const select = {
    targetList,
    fromClause,
    ...(whereClause ? { whereClause } : {}),
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  };
  return deparsePostgres({ stmts: [{ stmt: { SelectStmt: select } }] });
}

/** The parse tree of `sql` by PostgreSQL's grammar; `loadPostgresParser()` must have resolved. */
export function parsePostgres(sql: string, opts: { copy?: boolean } = {}): PgParseTree {
  const parse = pgParse;
  if (!parse) throw new Error('the PostgreSQL parser is not loaded (await loadPostgresParser())');
  const tree = pgCache.get(sql, () => parse(sql)) as PgParseTree;
  return opts.copy ? structuredClone(tree) : tree;
}

let mysql: Parser | null = null;
const mysqlCache = new ParseCache();

/**
 * The one node-sql-parser instance (MySQL, MariaDB and T-SQL grammars), loaded on first use.
 * It is CommonJS and needs no set-up, so it loads synchronously: callers need no await.
 */
export function sqlParser(): Parser {
  if (!mysql) {
    const { Parser: SqlParser } = createRequire(import.meta.url)('node-sql-parser') as {
      Parser: new () => Parser;
    };
    mysql = new SqlParser();
  }
  return mysql;
}

/** node-sql-parser's tree of `sql` in `database`'s grammar ('MySQL', 'MariaDB', 'TransactSQL'). */
export function astify(sql: string, database: string, opts: { copy?: boolean } = {}): unknown {
  const parser = sqlParser();
  const tree = mysqlCache.get(`${database}\u0000${sql}`, () => parser.astify(sql, { database }));
  return opts.copy ? structuredClone(tree) : tree;
}
