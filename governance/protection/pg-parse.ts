// PostgreSQL statements parsed for the rewrite, refused with the parser's own message.
import { parsePostgres } from '../../sql/parse.ts';
import { ProtectionParseError } from './rules.ts';

/**
 * Parses SQL text into a tree of the caller's own (the rewrite edits it); a parse error is
 * reported with the parser's message. The text was usually parsed already by classification.
 */
export function parsePg(sql: string): { stmts: Array<{ stmt: unknown }> } {
  try {
    return parsePostgres(sql, { copy: true }) as { stmts: Array<{ stmt: unknown }> };
  } catch (err) {
    throw new ProtectionParseError(
      `the statement could not be parsed: ${err instanceof Error ? err.message : 'syntax error'}`,
    );
  }
}
