// MariaDB for the harness: a fresh data dir (mariadb-install-db) in the temp dir, TLS with the
// harness CA and server certificate, listening on 127.0.0.1 and a socket in the temp dir.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import {
  findExecutable,
  MissingBinaryError,
  run,
  type ServerProcess,
  startServer,
  waitUntilReady,
} from './process.ts';
import type { SqlServer } from './servers.ts';
import type { TlsFiles } from './tls.ts';

const SBIN = ['/usr/sbin', '/usr/local/sbin'];

/** The server and its data-dir initializer; older packages call them mysqld and mysql_install_db. */
export function findMariadb(): { server: string; installDb: string } {
  const server = findExecutable(['mariadbd', 'mysqld'], SBIN);
  const installDb = findExecutable(['mariadb-install-db', 'mysql_install_db'], SBIN);
  if (!server || !installDb) {
    throw new MissingBinaryError(
      'MariaDB (mariadbd, mariadb-install-db) not found: apt-get install mariadb-server (or bash test/setup-deps.sh as root)',
    );
  }
  return { server, installDb };
}

export interface StartedMariadb {
  server: SqlServer;
  version: string;
  process: ServerProcess;
}

/** Starts MariaDB in `dir` on `port` with a password account (all privileges) and a cert-only user. */
export async function startMariadb(opts: {
  dir: string;
  port: number;
  tls: TlsFiles;
  account: { user: string; password: string; database: string; certUser: string };
}): Promise<StartedMariadb> {
  const { dir, port, tls, account } = opts;
  const bins = findMariadb();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const data = join(dir, 'data');
  const log = join(dir, 'mariadb.log');
  // mariadbd refuses to run as root unless told to; the data dir then belongs to root.
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  // --no-defaults must come first: /etc/mysql/my.cnf would otherwise bring in the system paths.
  const common = ['--no-defaults', `--datadir=${data}`, ...asRoot];

  await run(
    bins.installDb,
    [...common, '--auth-root-authentication-method=socket', '--skip-test-db', '--skip-name-resolve'],
    {
      cwd: dir,
      logFile: log,
    },
  );

  // Runs before the server accepts connections, so "ready" below also means "users exist".
  // Accounts for both 127.0.0.1 (TCP, names are not resolved) and localhost (the socket).
  const sql = (s: string) => s.replaceAll("'", "''");
  const q = (id: string) => '`' + id.replaceAll('`', '``') + '`';
  const statements = ['127.0.0.1', 'localhost'].flatMap((host) => [
    `CREATE USER '${sql(account.user)}'@'${host}' IDENTIFIED BY '${sql(account.password)}'`,
    `GRANT ALL PRIVILEGES ON *.* TO '${sql(account.user)}'@'${host}' WITH GRANT OPTION`,
    // A client certificate signed by the harness CA is the only credential (no password).
    `CREATE USER '${sql(account.certUser)}'@'${host}' REQUIRE X509`,
    `GRANT ALL PRIVILEGES ON ${q(account.database)}.* TO '${sql(account.certUser)}'@'${host}'`,
  ]);
  const initFile = join(dir, 'init.sql');
  await writeFile(initFile, [`CREATE DATABASE ${q(account.database)}`, ...statements, ''].join(';\n'));

  const proc = startServer(
    'mariadb',
    bins.server,
    [
      ...common,
      `--socket=${join(dir, 'mysqld.sock')}`,
      `--pid-file=${join(dir, 'mysqld.pid')}`,
      `--tmpdir=${dir}`,
      `--log-error=${log}`,
      `--init-file=${initFile}`,
      '--bind-address=127.0.0.1',
      `--port=${port}`,
      '--skip-name-resolve',
      '--max-connections=300',
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_general_ci',
      `--ssl-ca=${tls.caCertFile}`,
      `--ssl-cert=${tls.serverCertFile}`,
      `--ssl-key=${tls.serverKeyFile}`,
      // Throw-away data: durability only costs time here.
      '--innodb-flush-log-at-trx-commit=0',
      '--innodb-doublewrite=0',
      '--skip-log-bin',
    ],
    { cwd: dir, logFile: log },
  );

  try {
    let version = '';
    await waitUntilReady(proc, async () => {
      const conn = await mysql.createConnection({
        host: '127.0.0.1',
        port,
        user: account.user,
        password: account.password,
        connectTimeout: 2000,
      });
      try {
        const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
        version = String(rows[0]?.v ?? 'unknown');
      } finally {
        await conn.end();
      }
      return true;
    });
    return { server: { host: '127.0.0.1', port, ...account, tls: tls.material }, version, process: proc };
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}
