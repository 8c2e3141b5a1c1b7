// Proves the harness servers are real and configured as the other tests assume: TLS that verifies
// by hostname, client-certificate login, and the accounts and databases in servers.ts.
import { createClient } from '@clickhouse/client';
import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { servers } from './harness/servers.ts';
import { createTestStore } from './harness/store.ts';

// The servers send the CA along with their certificate (OpenSSL completes the chain from the CA file
// they trust), so a client trusting another CA sees "self-signed certificate in certificate chain".
const UNTRUSTED = /self-signed certificate in certificate chain|unable to verify the first certificate/;

type PgOptions = postgres.Options<Record<string, postgres.PostgresType>>;

/** Runs `fn` on a one-connection postgres.js client and always closes it. */
async function withPg<T>(options: PgOptions, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const pg = servers().postgres;
  const sql = postgres({
    port: pg.port,
    database: pg.database,
    max: 1,
    connect_timeout: 5,
    onnotice: () => {},
    ...options,
  });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

const pgSession = (sql: postgres.Sql) =>
  sql<{ user: string; ssl: boolean; version: string | null; client_dn: string | null }[]>`
    select current_user as user, ssl, version, client_dn from pg_stat_ssl where pid = pg_backend_pid()`;

describe('PostgreSQL', () => {
  it('accepts the password user over TLS with verify-full to the right hostname', async () => {
    const { user, password, tls } = servers().postgres;
    const [row] = await withPg(
      { host: tls.rightHostname, user, password, ssl: { ca: tls.caCert } },
      pgSession,
    );
    expect(row).toMatchObject({ user, ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it('accepts the password user over plain TCP', async () => {
    const { host, user, password } = servers().postgres;
    const [row] = await withPg({ host, user, password, ssl: false }, pgSession);
    expect(row).toMatchObject({ user, ssl: false });
  });

  it('fails hostname verification when connecting by IP address', async () => {
    const { user, password, tls } = servers().postgres;
    // `host` inside ssl is deliberate: postgres.js sends no servername for an IP address, and Node's
    // tls.connect({ socket }) then checks the certificate against "localhost" instead of the IP.
    const ssl = { ca: tls.caCert, host: tls.wrongHostname };
    const attempt = withPg({ host: tls.wrongHostname, user, password, ssl }, pgSession);
    await expect(attempt).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('fails verification against an unrelated CA', async () => {
    const { user, password, tls } = servers().postgres;
    const attempt = withPg(
      { host: tls.rightHostname, user, password, ssl: { ca: tls.otherCaCert } },
      pgSession,
    );
    await expect(attempt).rejects.toThrow(UNTRUSTED);
  });

  it('logs the certificate user in with its client certificate and no password', async () => {
    const { certUser, tls } = servers().postgres;
    const ssl = { ca: tls.caCert, cert: tls.clientCert, key: tls.clientKey };
    const [row] = await withPg({ host: tls.rightHostname, user: certUser, ssl }, pgSession);
    expect(row).toMatchObject({ user: certUser, ssl: true, client_dn: `/CN=${certUser}` });
  });

  it('refuses the certificate user without a client certificate', async () => {
    const { certUser, tls } = servers().postgres;
    const attempt = withPg({ host: tls.rightHostname, user: certUser, ssl: { ca: tls.caCert } }, pgSession);
    await expect(attempt).rejects.toThrow(/certificate/);
  });

  it('creates and drops a fresh store database', async () => {
    const store = await createTestStore();
    const name = new URL(store.url).pathname.slice(1);
    const sql = postgres(store.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ db: string }[]>`select current_database() as db`;
      expect(row?.db).toBe(name);
    } finally {
      await sql.end({ timeout: 1 });
    }
    await store.drop();
    const exists = await withPg(
      { host: servers().postgres.host, user: servers().postgres.user, password: servers().postgres.password },
      (admin) => admin`select 1 from pg_database where datname = ${name}`,
    );
    expect(exists).toHaveLength(0);
  });
});

/** Opens a mysql2 connection, runs `fn`, and always closes it. */
async function withMy<T>(
  options: mysql.ConnectionOptions,
  fn: (conn: mysql.Connection) => Promise<T>,
): Promise<T> {
  const my = servers().mariadb;
  const conn = await mysql.createConnection({
    port: my.port,
    database: my.database,
    connectTimeout: 5000,
    ...options,
  });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

async function mySession(conn: mysql.Connection): Promise<{ user: string; tls: string }> {
  const [[who]] = await conn.query<mysql.RowDataPacket[]>('SELECT CURRENT_USER() AS user');
  const [[tls]] = await conn.query<mysql.RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Ssl_version'");
  return { user: String(who?.user), tls: String(tls?.Value) };
}

describe('MariaDB', () => {
  it('accepts the password user over TLS verified against the harness CA', async () => {
    const { user, password, tls } = servers().mariadb;
    const session = await withMy(
      { host: tls.rightHostname, user, password, ssl: { ca: tls.caCert } },
      mySession,
    );
    expect(session).toEqual({ user: `${user}@127.0.0.1`, tls: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it('fails verification against an unrelated CA', async () => {
    const { user, password, tls } = servers().mariadb;
    const attempt = withMy(
      { host: tls.rightHostname, user, password, ssl: { ca: tls.otherCaCert } },
      mySession,
    );
    await expect(attempt).rejects.toThrow(UNTRUSTED);
  });

  it('logs the certificate user in with its client certificate and no password', async () => {
    const { certUser, tls } = servers().mariadb;
    const ssl = { ca: tls.caCert, cert: tls.clientCert, key: tls.clientKey };
    const session = await withMy({ host: tls.rightHostname, user: certUser, ssl }, mySession);
    expect(session).toEqual({ user: `${certUser}@127.0.0.1`, tls: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it('refuses the certificate user without a client certificate', async () => {
    const { certUser, tls } = servers().mariadb;
    const attempt = withMy({ host: tls.rightHostname, user: certUser, ssl: { ca: tls.caCert } }, mySession);
    await expect(attempt).rejects.toMatchObject({ code: 'ER_ACCESS_DENIED_ERROR' });
  });
});

describe('ClickHouse', () => {
  it('answers SELECT 1 in the test database as the password user', async () => {
    const ch = servers().clickhouse;
    const client = createClient({
      url: `http://${ch.host}:${ch.httpPort}`,
      username: ch.user,
      password: ch.password,
      database: ch.database,
    });
    try {
      const result = await client.query({
        query: 'SELECT 1 AS one, currentDatabase() AS db, version() AS v',
        format: 'JSON',
      });
      const body = await result.json<{ one: number; db: string; v: string }>();
      expect(body.data).toEqual([{ one: 1, db: ch.database, v: ch.version }]);
    } finally {
      await client.close();
    }
  });
});

describe('Temporal', () => {
  it('answers getSystemInfo and has the Countersign search attributes', async () => {
    const { address, namespace } = servers().temporal;
    const connection = await Connection.connect({ address });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const keyword = encodeSearchAttributeIndexedValueType('KEYWORD');
      expect(customAttributes).toMatchObject({ CountersignWorkflowId: keyword, CountersignOrgId: keyword });
    } finally {
      await connection.close();
    }
  });
});
