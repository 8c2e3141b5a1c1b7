// PostgreSQL for the harness: a fresh cluster (initdb) in the temp dir, TLS on with the harness CA,
// listening on 127.0.0.1 and a Unix socket in the temp dir only.
import { execFileSync } from 'node:child_process';
import { appendFile, chown, copyFile, mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
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

/** Where initdb and postgres are: PATH first, else the newest Debian /usr/lib/postgresql/N/bin. */
export async function findPostgres(): Promise<{ initdb: string; postgres: string }> {
  let debianDirs: string[] = [];
  try {
    const versions = (await readdir('/usr/lib/postgresql')).filter((v) => /^\d+$/.test(v));
    versions.sort((a, b) => Number(b) - Number(a));
    debianDirs = versions.map((v) => `/usr/lib/postgresql/${v}/bin`);
  } catch {
    // no Debian layout
  }
  const initdb = findExecutable(['initdb'], debianDirs);
  const server = findExecutable(['postgres'], debianDirs);
  if (!initdb || !server) {
    throw new MissingBinaryError(
      'PostgreSQL (initdb, postgres) not found: apt-get install postgresql (or bash test/setup-deps.sh as root)',
    );
  }
  return { initdb, postgres: server };
}

export interface StartedPostgres {
  server: SqlServer;
  version: string;
  process: ServerProcess;
}

/** Starts PostgreSQL in `dir` on `port`; `account` becomes the superuser and `certUser` a cert-only role. */
export async function startPostgres(opts: {
  dir: string;
  port: number;
  tls: TlsFiles;
  account: { user: string; password: string; database: string; certUser: string };
}): Promise<StartedPostgres> {
  const { dir, port, tls, account } = opts;
  const bins = await findPostgres();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // PostgreSQL refuses to run as root; then it runs as the `postgres` system user, which must own
  // its data dir, key file and socket dir (the key must not be readable by others either).
  const owner = process.getuid?.() === 0 ? postgresSystemUser() : undefined;

  const files = {
    data: join(dir, 'data'),
    pwfile: join(dir, 'pwfile'),
    cert: join(dir, 'server.crt'),
    key: join(dir, 'server.key'),
    ca: join(dir, 'ca.crt'),
    log: join(dir, 'postgres.log'),
  };
  await copyFile(tls.serverCertFile, files.cert);
  await copyFile(tls.serverKeyFile, files.key);
  await copyFile(tls.caCertFile, files.ca);
  await writeFile(files.pwfile, `${account.password}\n`, { mode: 0o600 });
  if (owner) {
    for (const f of [dir, files.cert, files.key, files.ca, files.pwfile]) {
      await chown(f, owner.uid, owner.gid);
    }
  }
  const asOwner = { ...owner, cwd: dir, env: { ...process.env, HOME: dir, LC_ALL: 'C' }, logFile: files.log };

  await run(
    bins.initdb,
    [
      '-D',
      files.data,
      '-U',
      account.user,
      `--pwfile=${files.pwfile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ],
    asOwner,
  );
  await unlink(files.pwfile);

  await appendFile(
    join(files.data, 'postgresql.conf'),
    [
      '# countersign test harness',
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${dir}'`,
      'ssl = on',
      `ssl_cert_file = '${files.cert}'`,
      `ssl_key_file = '${files.key}'`,
      `ssl_ca_file = '${files.ca}'`,
      'max_connections = 300',
      // Two-phase commit for exactly-once workflow steps (governance/once.ts); 0 turns it off.
      'max_prepared_transactions = 20',
      // Throw-away data: durability only costs time here.
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'log_min_messages = warning',
      // Per-statement costs for profiling (`BENCH_PG_STAT_STATEMENTS=1 npm run bench -- mcp`).
      ...(process.env.BENCH_PG_STAT_STATEMENTS ? ["shared_preload_libraries = 'pg_stat_statements'"] : []),
      '',
    ].join('\n'),
  );
  // Order matters: the first matching line decides. The cert user may only log in over TLS with a
  // client certificate whose CN is its name; everyone else uses a password, with or without TLS.
  await writeFile(
    join(files.data, 'pg_hba.conf'),
    [
      'local all all trust',
      `hostssl all ${account.certUser} 127.0.0.1/32 cert`,
      `host all ${account.certUser} 127.0.0.1/32 reject`,
      'host all all 127.0.0.1/32 scram-sha-256',
      '',
    ].join('\n'),
  );

  // SIGINT is PostgreSQL's "fast shutdown"; SIGTERM would wait for every client to disconnect.
  // When the run dies without teardown, SIGQUIT ("immediate") still lets the postmaster remove its
  // SysV shared memory segment, which SIGKILL would leak.
  const proc = startServer('postgres', bins.postgres, ['-D', files.data], {
    ...asOwner,
    stopSignal: 'SIGINT',
    exitSignal: 'SIGQUIT',
  });
  const admin = postgres({
    host: '127.0.0.1',
    port,
    user: account.user,
    password: account.password,
    database: 'postgres',
    max: 1,
    onnotice: () => {},
    connect_timeout: 2,
  });
  try {
    await waitUntilReady(proc, async () => {
      await admin`select 1`;
      return true;
    });
    await admin`create role ${admin(account.certUser)} login`;
    await admin`create database ${admin(account.database)}`;
    await admin`grant all on database ${admin(account.database)} to ${admin(account.certUser)}`;
    const [row] = await admin<{ server_version: string }[]>`show server_version`;
    const version = (row?.server_version ?? 'unknown').split(' ')[0] ?? 'unknown';
    return {
      server: { host: '127.0.0.1', port, ...account, tls: tls.material },
      version,
      process: proc,
    };
  } catch (err) {
    await proc.stop('SIGQUIT', 1000);
    throw err;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** uid/gid of the `postgres` user, created (as the Debian package would) when missing. */
function postgresSystemUser(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number(
      execFileSync('id', [flag, 'postgres'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim(),
    );
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', [
      '--system',
      '--user-group',
      '--home-dir',
      '/var/lib/postgresql',
      '--no-create-home',
      '--shell',
      '/bin/sh',
      'postgres',
    ]);
    return { uid: id('-u'), gid: id('-g') };
  }
}
