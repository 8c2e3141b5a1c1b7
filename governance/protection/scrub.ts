// What the server says back about a rewritten statement. MariaDB quotes the expression an error
// is about as it reprints it (`BIGINT UNSIGNED value is out of range in 'cast(md5(concat('<salt>:',
// …`), so an error, a warning or a column name can carry the rewritten SQL and with it the
// policy's salt. Those quotes are taken out; anything still naming the salt is withheld whole.
import type { QueryResult } from '../../adapters/types.ts';

/** Messages whose quoted part is the server's reprint of an expression or of the statement. */
const QUOTES_SQL: Array<[RegExp, string]> = [
  // ER_DATA_OUT_OF_RANGE
  [/( value is out of range) in '[\s\S]*'$/, '$1 in an expression of the statement'],
  // ER_PARSE_ERROR and kin: "… near '<text>' at line n"
  [/ near '[\s\S]*' at line \d+$/, ''],
  // ER_WRONG_FIELD_WITH_GROUP and ER_NON_GROUPING_FIELD_USED quote an expression too
  [/^'[\s\S]*'( isn't in GROUP BY)$/, 'an expression$1'],
];

const WITHHELD =
  'the database reported an error whose text quotes the statement as rewritten for data protection; it is withheld';

/** A server message safe to show: quoted reprints of the statement removed, the salt never. */
export function scrubMessage(message: string, salt: string): string {
  let out = message;
  for (const [pattern, replacement] of QUOTES_SQL) out = out.replace(pattern, replacement);
  return salt && out.includes(salt) ? WITHHELD : out;
}

/** A thrown error with its message scrubbed; its class, kind and code are kept. */
export function scrubError(err: unknown, salt: string): unknown {
  if (!(err instanceof Error)) return err;
  const message = scrubMessage(err.message, salt);
  if (message === err.message) return err;
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  Object.assign(copy, err);
  Object.defineProperty(copy, 'message', { value: message, enumerable: false, writable: true });
  copy.stack = `${err.name}: ${message}`;
  return copy;
}

/** Column names and messages of a result, scrubbed the same way. */
export function scrubResult(result: QueryResult, salt: string): QueryResult {
  const bad = (s: string) => salt !== '' && s.includes(salt);
  if (!result.columns.some(bad) && !result.messages.some((m) => scrubMessage(m, salt) !== m)) return result;
  return {
    ...result,
    columns: result.columns.map((c) => (bad(c) ? '?column?' : c)),
    messages: result.messages.map((m) => scrubMessage(m, salt)),
  };
}

/**
 * A thrown error whose message is withheld whole: the statement was bound with values its
 * readers may not see (an undo's kept rows), and a server quotes the values it refuses
 * (MariaDB: "Duplicate entry '<value>' for key …"). Its class, kind and code are kept.
 */
export function withheldError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  const message = `the database refused the statement${typeof code === 'string' || typeof code === 'number' ? ` (code ${code})` : ''}; its message is withheld, as it may quote the kept values bound to it`;
  const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
  Object.assign(copy, err);
  Object.defineProperty(copy, 'message', { value: message, enumerable: false, writable: true });
  copy.stack = `${err.name}: ${message}`;
  return copy;
}
