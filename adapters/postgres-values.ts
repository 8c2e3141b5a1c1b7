// PostgreSQL values in the text format, both ways (README "Value mapping"). Rows arrive as the
// server wrote them; each column's type OID picks its parser. Dates and times stay in the server's
// words, in ISO 8601 shape: `date` and `timestamp` carry no zone (a Date would invent one, and
// lose microseconds), `timestamptz` is an instant, written in UTC. int8 and numeric stay decimal
// strings (exact); bytes are base64.
import { parse as parseArrayLiteral } from 'postgres-array';
import type { ParamValue } from './types.ts';

type Parser = (text: string) => unknown;

const isoInstant = (x: string): unknown => {
  const d = new Date(x);
  return Number.isNaN(d.getTime()) ? x : d.toISOString(); // 'infinity' stays as written
};
const asNumber = (x: string): number => Number(x);

/** Parsers by type OID (pg_type.dat); a type not listed stays text. */
const SCALARS = new Map<number, Parser>([
  [16, (x) => x === 't'], // bool
  [17, (x) => Buffer.from(x.slice(2), 'hex').toString('base64')], // bytea, hex output: \x...
  [21, asNumber], // int2
  [23, asNumber], // int4
  [26, asNumber], // oid
  [700, asNumber], // float4
  [701, asNumber], // float8
  [114, (x) => JSON.parse(x)], // json
  [3802, (x) => JSON.parse(x)], // jsonb
  [1082, (x) => x], // date
  [1114, (x) => x.replace(' ', 'T')], // timestamp
  [1184, isoInstant], // timestamptz
]);

/**
 * Element type by array type OID: the built-in ones, so a pool can parse arrays before it has
 * read the server's own list (`arrayTypesQuery`), which adds arrays of every other type.
 */
const BUILTIN_ARRAYS: ReadonlyArray<[number, number]> = [
  [1000, 16],
  [1001, 17],
  [1005, 21],
  [1007, 23],
  [1028, 26],
  [1021, 700],
  [1022, 701],
  [199, 114],
  [3807, 3802],
  [1182, 1082],
  [1115, 1114],
  [1185, 1184],
  [1016, 20],
  [1231, 1700],
  [1009, 25],
  [1015, 1043],
];

/**
 * Every array type of the server with its element type; box[] (`;`-delimited) stays text. As
 * `oid` (parsed to numbers), not int4: OIDs from 2^31 on would turn negative, and the row
 * description's type OID is unsigned.
 */
export const arrayTypesQuery =
  "select typarray as array, oid as element from pg_catalog.pg_type where typarray <> 0 and typdelim = ','";

/** The parsers of one server: the scalar ones above, and its arrays element-wise. */
export class PgTypes {
  readonly #arrays = new Map<number, number>(BUILTIN_ARRAYS);
  readonly #parsers = new Map<number, Parser | null>();

  /** Adds the server's array types (rows of `arrayTypesQuery`: array OID, element OID). */
  addArrays(rows: ReadonlyArray<readonly [number, number]>): void {
    for (const [array, element] of rows) this.#arrays.set(array, element);
    this.#parsers.clear();
  }

  /** The parser for a column of type `oid`, or null for text as it came. */
  parserFor(oid: number): Parser | null {
    const known = this.#parsers.get(oid);
    if (known !== undefined) return known;
    let parser: Parser | null = SCALARS.get(oid) ?? null;
    const element = this.#arrays.get(oid);
    if (element !== undefined) {
      const each = SCALARS.get(element);
      parser = each ? (x) => parseArrayLiteral(x, each) : (x) => parseArrayLiteral(x);
    }
    this.#parsers.set(oid, parser);
    return parser;
  }
}

/** A parameter's type OID for Parse: what the value says of itself, else 0 (the server infers). */
export function paramType(v: ParamValue): number {
  if (v instanceof Date) return 1184;
  if (v instanceof Uint8Array) return 17;
  if (typeof v === 'bigint') return 20;
  if (typeof v === 'boolean') return 16;
  return 0;
}

/** A parameter for Bind: text, or the bytes themselves (sent in binary format). */
export function paramText(v: ParamValue): string | Buffer | null {
  if (v === null) return null;
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return String(v);
}
