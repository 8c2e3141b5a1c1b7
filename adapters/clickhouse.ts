// ClickHouse over HTTP(S) through @clickhouse/client. Values travel as server-side query
// parameters (`{p1:String}` + `param_p1=`), never in the text. The row cap and the time limit are
// server settings (`max_result_rows` with `result_overflow_mode=break`, `max_execution_time`), so
// they hold on every server version; results come back as one JSONCompact document.
import { Agent } from 'node:https';
import { isIP } from 'node:net';
import {
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  ClickHouseLogLevel,
  type ClickHouseSettings,
  createClient,
} from '@clickhouse/client';
import { guardedConnect } from './connect.ts';
import { AdapterError, secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { clickhousePlaceholder } from './placeholders.ts';

export { clickhousePlaceholder, clickhouseType } from './placeholders.ts';

import { clickhouseTls } from './ssl.ts';
import type {
  Adapter,
  AdapterPool,
  ConnectionConfig,
  ExecuteOptions,
  ParamValue,
  QueryResult,
  SchemaTable,
} from './types.ts';
import { checkExecuteOptions, checkStatement, groupSchema, RowCollector, type SchemaRow } from './values.ts';

const POOL_SIZE = 5;
const CANCEL_GRACE_MS = 5_000;
/** Ceiling on one response body: the server cap stops at a block boundary, not at the exact row. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
const TIMEOUT_EXCEEDED = '159';
const UNKNOWN_SETTING = '115';

/** The `param_pN` value the client sends for `v` (the client escapes strings). */
export function clickhouseParam(v: ParamValue): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (typeof v === 'bigint') return v.toString();
  // DateTime has whole seconds; a Unix timestamp is read the same in every server time zone.
  if (v instanceof Date) return String(Math.floor(v.getTime() / 1000));
  return v;
}

/** @clickhouse/client options for `config` (exported for unit tests). */
export function clickhouseOptions(config: ConnectionConfig, keepAlive = true): ClickHouseClientConfigOptions {
  const { protocol, agent } = clickhouseTls(config.ssl, config.hostname);
  // The URL is where TCP goes (a dial address when there is one); TLS names config.hostname.
  const target = config.dial ?? { host: config.hostname, port: config.port };
  const host = isIP(target.host) === 6 ? `[${target.host}]` : target.host;
  const opts: ClickHouseClientConfigOptions = {
    url: `${protocol}://${host}:${target.port}`,
    username: config.username,
    password: config.password,
    database: config.database,
    application: 'countersign',
    // Each statement has its own limit (an abort signal); the client's default would cut at 30 s.
    request_timeout: 24 * 3600 * 1000,
    max_open_connections: POOL_SIZE,
    keep_alive: { enabled: keepAlive },
    log: { level: ClickHouseLogLevel.OFF },
  };
  // The client's own `tls` option cannot skip verification; an agent carries the full mapping.
  if (agent) opts.http_agent = new Agent({ ...agent, keepAlive, maxSockets: POOL_SIZE });
  if (config.ssl.enabled && config.ssl.clientCert && !config.password) {
    // Certificate login: ClickHouse refuses a Basic auth header alongside it.
    opts.set_basic_auth_header = false;
    opts.http_headers = { 'X-ClickHouse-User': config.username, 'X-ClickHouse-SSL-Certificate-Auth': 'on' };
  }
  return opts;
}

/**
 * An AdapterError with the ClickHouse error code. The client reads the code only from the
 * current wording (`Code: 62. DB::Exception: ...`); 18.x servers write `Code: 62, e.displayText() = ...`.
 */
export function clickhouseError(
  err: unknown,
  secrets: readonly string[],
  kind: 'connection' | 'query',
): AdapterError {
  if (err instanceof AdapterError) return err;
  const message = (err instanceof Error ? err.message : String(err)).trim();
  const own = (err as { code?: unknown } | null)?.code;
  const code = typeof own === 'string' && own ? own : /^Code: (\d+)[.,]/.exec(message)?.[1];
  return toAdapterError(Object.assign(new Error(message), { code }), secrets, kind);
}

interface Compact {
  meta: Array<{ name: string; type: string }>;
  data: unknown[][];
}

class ClickhousePool implements AdapterPool {
  private readonly secrets: string[];
  private readonly client: ClickHouseClient;
  /** Whether the server knows output_format_json_quote_decimals (not before 19.x); learned on first use. */
  private quoteDecimals = true;

  constructor(private readonly config: ConnectionConfig) {
    this.secrets = secretsOf(config);
    this.client = createClient(clickhouseOptions(config));
  }

  async check(): Promise<void> {
    // A client of its own, so the check opens (and verifies) a new connection.
    const client = createClient(clickhouseOptions(this.config, false));
    try {
      await this.select(client, 'SELECT 1', {}, {}, (this.config.timeoutSeconds ?? 30) * 1000);
    } catch (err) {
      throw clickhouseError(err, this.secrets, 'connection');
    } finally {
      await client.close();
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    const kind = checkStatement(text);
    const query_params = Object.fromEntries(params.map((v, i) => [`p${i + 1}`, clickhouseParam(v)]));
    const settings: ClickHouseSettings = {
      max_execution_time: options.timeoutSeconds,
      // `break` returns what was read when the cap is passed, rounded up to a block.
      max_result_rows: String(options.maxRows + 1),
      result_overflow_mode: 'break',
    };
    // ClickHouse has no transactions to make read-only; `readonly=1` on the query itself allows
    // reads only, and forbids the statement's own SETTINGS from lifting it (ClickHouse docs,
    // Settings › Permissions for queries). The other settings of this request are checked
    // against the readonly value the request starts with, so they still apply.
    if (options.readOnly) settings.readonly = '1';
    try {
      const { body, summary } = await this.run(
        text,
        query_params,
        settings,
        options.timeoutSeconds * 1000 + CANCEL_GRACE_MS,
      );
      const rows = new RowCollector(options.maxRows);
      if (body === null) return rows.result([], kind, [], Number(summary?.written_rows ?? 0));
      const dateTimes = body.meta.flatMap((m, i) => (/^(Nullable\()?DateTime/.test(m.type) ? [i] : []));
      for (const row of body.data) {
        for (const i of dateTimes)
          if (typeof row[i] === 'string') row[i] = (row[i] as string).replace(' ', 'T');
        if (!rows.add(row)) break;
      }
      return rows.result(
        body.meta.map((m) => m.name),
        kind,
        [],
        null,
      );
    } catch (err) {
      const e = clickhouseError(err, this.secrets, 'query');
      if (e.code === TIMEOUT_EXCEEDED || e.code === 'ABORTED')
        throw timeoutError(options.timeoutSeconds, e.message, this.secrets);
      throw e;
    }
  }

  /** Runs with quoted decimals where the server knows the setting (exact values, README). */
  private async run(
    sql: string,
    params: Record<string, unknown>,
    settings: ClickHouseSettings,
    limitMs: number,
  ) {
    if (this.quoteDecimals) {
      try {
        return await this.exec(
          this.client,
          sql,
          params,
          { ...settings, output_format_json_quote_decimals: 1 },
          limitMs,
        );
      } catch (err) {
        // The unknown setting is rejected before the statement runs, so running it again is safe.
        const e = clickhouseError(err, [], 'query');
        if (e.code !== UNKNOWN_SETTING || !e.message.includes('output_format_json_quote_decimals')) throw err;
        this.quoteDecimals = false;
      }
    }
    return this.exec(this.client, sql, params, settings, limitMs);
  }

  private async select(
    client: ClickHouseClient,
    sql: string,
    params: Record<string, unknown>,
    settings: ClickHouseSettings,
    limitMs: number,
  ): Promise<Compact> {
    const { body } = await this.exec(client, sql, params, settings, limitMs);
    if (!body) throw new AdapterError('the server returned no result set', 'query');
    return body;
  }

  /** One request; the body is a JSONCompact document, or null for a statement without a result set. */
  private async exec(
    client: ClickHouseClient,
    sql: string,
    params: Record<string, unknown>,
    settings: ClickHouseSettings,
    limitMs: number,
  ) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), limitMs);
    try {
      const res = await client.exec({
        query: sql,
        query_params: params,
        clickhouse_settings: { ...settings, default_format: 'JSONCompact' },
        abort_signal: abort.signal,
      });
      const text = await readBody(res.stream, abort);
      return { body: text.trim() ? parseCompact(text) : null, summary: res.summary };
    } catch (err) {
      // Aborted by the timer (not by readBody's size ceiling, which throws its own error).
      if (abort.signal.aborted && !(err instanceof AdapterError))
        throw new AdapterError('the request was aborted at the time limit', 'timeout', 'ABORTED');
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async readSchema(): Promise<SchemaTable[]> {
    const limitMs = (this.config.timeoutSeconds ?? 30) * 1000;
    try {
      // Two plain selects rather than a JOIN: the oldest servers (18.x) lack JOIN ... ON on two keys.
      const tables = await this.select(
        this.client,
        'SELECT name, engine FROM system.tables WHERE database = currentDatabase()',
        {},
        {},
        limitMs,
      );
      const columns = await this.select(
        this.client,
        'SELECT table, name, type FROM system.columns WHERE database = currentDatabase()',
        {},
        {},
        limitMs,
      );
      const engines = new Map(tables.data.map((r) => [String(r[0]), String(r[1])]));
      const rows: SchemaRow[] = columns.data.map((r) => ({
        schema: this.config.database,
        name: String(r[0]),
        is_view: /View$/.test(engines.get(String(r[0])) ?? ''),
        column: String(r[1]),
        type: String(r[2]),
        nullable: String(r[2]).startsWith('Nullable('),
      }));
      rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); // stable: keeps column order
      return groupSchema(rows);
    } catch (err) {
      throw clickhouseError(err, this.secrets, 'query');
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

async function readBody(stream: AsyncIterable<Buffer | string>, abort: AbortController): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > MAX_BODY_BYTES) {
      abort.abort();
      throw new AdapterError(
        `the result is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB even after the row cap`,
        'query',
      );
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A JSONCompact document. An exception raised after the server started answering (HTTP 200
 * already sent) is appended to the partial output as `Code: N. DB::Exception: ...`.
 */
export function parseCompact(text: string): Compact {
  try {
    return JSON.parse(text) as Compact;
  } catch {
    const failure = /Code: (\d+)[.,] [\s\S]*$/.exec(text);
    if (failure) throw new AdapterError(failure[0].trim(), 'query', failure[1]);
    throw new AdapterError(`unreadable response from the server: ${text.slice(0, 200)}`, 'query');
  }
}

/** ClickHouse (@clickhouse/client, HTTP). Placeholders `{p1:Type}`, the type taken from the value. */
export const clickhouseAdapter: Adapter = {
  name: 'clickhouse',
  placeholder: clickhousePlaceholder,
  connect: (config) => guardedConnect('clickhouse', config, (c) => new ClickhousePool(c)),
};
