// One statement over the extended protocol in ONE round trip, its rows capped by the protocol:
// Parse, Bind, Describe, Execute with a row limit, Sync, written together. The server sends at
// most `limit` rows; when there were more it says PortalSuspended, and the Sync that follows ends
// the portal and the implicit transaction without sending the rest (PostgreSQL docs, Protocol
// §Extended Query: "Execute ... with a nonzero row limit"). node-postgres's own Query, like
// postgres.js's cursor, sends Flush instead and a second message after the first answer; this
// is handed to a pg Client as a "submittable" (the interface pg-cursor uses). The second
// round trip cost 0.04 ms of PostgreSQL CPU per call and a wake-up on each side.
//
// A statement may be led by a `begin` of ours in the same write (a write's backup read, which then
// opens the write's transaction without a round trip of its own).
//
// A read-only statement goes in the same write between `begin read only` and `commit`: messages
// up to the Sync are one unit, so the statement runs inside that transaction, and a write there
// fails with SQLSTATE 25006 read_only_sql_transaction (PostgreSQL docs, SET TRANSACTION). Should
// the statement fail, the server skips to the Sync and the transaction is left aborted: the pool
// then does not reuse the connection (adapters/postgres.ts).
import { AdapterError } from './errors.ts';
import type { PgTypes } from './postgres-values.ts';
import { paramText, paramType } from './postgres-values.ts';
import type { ParamValue } from './types.ts';

/** A result column as RowDescription describes it. */
export interface PgField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
}

export interface PgAnswer {
  fields: PgField[];
  rows: unknown[][];
  /** The command tag (`SELECT 3`, `INSERT 0 1`); null when the row limit stopped the statement. */
  command: string | null;
}

/** What this uses of pg's Connection (pg/lib/connection.js; @types/pg has older signatures). */
interface Wire {
  stream: { cork?: () => void; uncork?: () => void };
  parse(q: { text: string; types: number[] }): void;
  bind(c: { values: Array<string | Buffer | null> }): void;
  describe(m: { type: 'P' }): void;
  execute(c: { rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** The parts of pg's protocol messages read here (pg-protocol's message classes). */
interface Messages {
  rowDescription: { fields: PgField[] };
  dataRow: { fields: Array<string | null> };
  commandComplete: { text: string };
}

type Parser = ((text: string) => unknown) | null;

/** Parse, Bind and Execute of a statement of ours without parameters or rows. */
function simple(connection: Wire, text: string): void {
  connection.parse({ text, types: [] });
  connection.bind({ values: [] });
  connection.execute({ rows: 0 });
}

export class CappedQuery {
  readonly answer: Promise<PgAnswer>;
  #resolve!: (a: PgAnswer) => void;
  #reject!: (err: unknown) => void;
  #fields: PgField[] = [];
  #parsers: Parser[] = [];
  readonly #rows: unknown[][] = [];
  #command: string | null = null;
  #error: unknown = null;
  /** Executes answered so far (CommandComplete, EmptyQueryResponse or PortalSuspended each). */
  #done = 0;
  /** Which Execute is the caller's statement: the second when `begin read only` comes first. */
  readonly #mine: number;

  constructor(
    private readonly text: string,
    private readonly params: readonly ParamValue[],
    private readonly limit: number,
    private readonly types: PgTypes,
    private readonly readOnly = false,
    /** A statement of ours without parameters sent in the same write before this one (`begin …`). */
    private readonly lead: string | null = null,
  ) {
    this.#mine = readOnly || lead !== null ? 1 : 0;
    this.answer = new Promise<PgAnswer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Called by the pg Client when the connection is free for this statement. */
  submit(connection: Wire): Error | null {
    // Everything that can throw happens before the first message is written: a Parse sent
    // without its Sync would leave the connection waiting for one.
    let types: number[];
    let values: Array<string | Buffer | null>;
    try {
      types = this.params.map(paramType);
      values = this.params.map(paramText);
    } catch (err) {
      // pg hands the returned error to handleError and moves on to the next statement.
      return new AdapterError(`a parameter cannot be sent: ${(err as Error).message}`, 'query');
    }
    const stream = connection.stream;
    // One write: the messages wait in the socket until uncork.
    stream.cork?.();
    try {
      if (this.readOnly) simple(connection, 'begin transaction read only');
      else if (this.lead !== null) simple(connection, this.lead);
      connection.parse({ text: this.text, types });
      connection.bind({ values });
      connection.describe({ type: 'P' });
      connection.execute({ rows: this.limit });
      if (this.readOnly) simple(connection, 'commit');
      connection.sync();
    } finally {
      stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: Messages['rowDescription']): void {
    this.#fields = msg.fields;
    this.#parsers = msg.fields.map((f) => this.types.parserFor(f.dataTypeID));
  }

  handleDataRow(msg: Messages['dataRow']): void {
    const row = new Array<unknown>(msg.fields.length);
    try {
      for (let i = 0; i < row.length; i++) {
        const text = msg.fields[i] ?? null;
        const parse = this.#parsers[i];
        row[i] = text === null || !parse ? text : parse(text);
      }
    } catch (err) {
      // Thrown here it would surface in pg's socket handler; it fails this answer instead.
      this.#error ??= err;
      return;
    }
    this.#rows.push(row);
  }

  /** The row limit was reached with rows left: the Sync (or the commit) already sent ends the portal. */
  handlePortalSuspended(): void {
    this.#done++;
  }

  handleCommandComplete(msg: Messages['commandComplete']): void {
    if (this.#done++ === this.#mine) this.#command = msg.text;
  }

  handleEmptyQuery(): void {
    if (this.#done++ === this.#mine) this.#command = '';
  }

  handleCopyInResponse(connection: Wire): void {
    // In copy-in mode the server ignored the Sync already sent; after CopyFail it needs another.
    connection.sendCopyFail('COPY FROM STDIN is not supported here');
    connection.sync();
  }

  handleCopyData(): void {}

  /** A server error (the Sync still follows), or the connection lost. */
  handleError(err: unknown): void {
    this.#error = err;
    this.#reject(err);
  }

  handleReadyForQuery(): void {
    if (this.#error) this.#reject(this.#error);
    else this.#resolve({ fields: this.#fields, rows: this.#rows, command: this.#command });
  }
}
