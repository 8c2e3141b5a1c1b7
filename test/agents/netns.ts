// A private network for the agent tests: a Linux network namespace joined to the host by one
// veth pair, with a PostgreSQL and a MariaDB that listen on the namespace's own loopback. The
// service (the test process, in the host namespace) has no route to them at all; an agent
// started inside the namespace reaches them and dials out to the service over the veth link.
// Needs root (ip netns); netnsProblem() says why when that is not possible here.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findMariadb } from '../harness/mariadb.ts';
import { findPostgres } from '../harness/postgres.ts';
import { run, type ServerProcess, startServer, waitUntilReady } from '../harness/process.ts';
import { makeTls, type TlsFiles } from '../harness/tls.ts';

export const ACCOUNT = { user: 'countersign', password: 'netns-test-pw', database: 'countersign' } as const;
/** Ports inside the namespace: nothing else listens there, so the defaults are free. */
export const PORTS = { postgres: 5432, mariadb: 3306 } as const;

export interface PrivateNetwork {
  name: string;
  /** The host end of the veth link: where the service listens for the agent. */
  hostIp: string;
  /** Prefix that runs a command inside the namespace. */
  exec: string[];
  tls: TlsFiles;
  stop(): Promise<void>;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Why a namespace cannot be made here, or null when it can. */
export function netnsProblem(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = `csprobe${randomBytes(3).toString('hex')}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return null;
  } catch (err) {
    return `ip netns add failed: ${(err as Error).message}`;
  }
}

/** Makes the namespace, its link and both servers. */
export async function startPrivateNetwork(): Promise<PrivateNetwork> {
  const tag = randomBytes(3).toString('hex');
  const name = `csagt${tag}`;
  // A /30 in 10.231.0.0/16 picked at random, so concurrent runs do not collide.
  const third = 1 + (randomBytes(1)[0]! % 250);
  const fourth = 4 * (randomBytes(1)[0]! % 60);
  const hostIp = `10.231.${third}.${fourth + 1}`;
  const nsIp = `10.231.${third}.${fourth + 2}`;
  const dir = mkdtempSync(join(tmpdir(), 'countersign-netns-'));
  chmodSync(dir, 0o711);
  const servers: ServerProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop(undefined, 3000)));
    try {
      ip('link', 'del', `csh${tag}`);
    } catch {
      // gone with the namespace
    }
    try {
      ip('netns', 'del', name);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    ip('netns', 'add', name);
    ip('link', 'add', `csh${tag}`, 'type', 'veth', 'peer', 'name', `csn${tag}`, 'netns', name);
    ip('addr', 'add', `${hostIp}/30`, 'dev', `csh${tag}`);
    ip('link', 'set', `csh${tag}`, 'up');
    ip('-n', name, 'addr', 'add', `${nsIp}/30`, 'dev', `csn${tag}`);
    ip('-n', name, 'link', 'set', `csn${tag}`, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    const exec = ['ip', 'netns', 'exec', name];
    const tls = await makeTls(join(dir, 'tls'), 'certuser');
    servers.push(await startPostgresIn(exec, join(dir, 'pg'), tls));
    servers.push(await startMariadbIn(exec, join(dir, 'maria'), tls));
    return { name, hostIp, exec, tls, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits for `line` in the server's log (the host cannot connect to check, by design). */
async function logSays(server: ServerProcess, line: string): Promise<void> {
  await waitUntilReady(server, async () => {
    try {
      return readFileSync(server.logFile, 'utf8').includes(line);
    } catch {
      return false;
    }
  });
}

async function startPostgresIn(exec: string[], dir: string, tls: TlsFiles): Promise<ServerProcess> {
  const bins = await findPostgres();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const owner = {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  };
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  const pwfile = join(dir, 'pwfile');
  const key = join(dir, 'server.key');
  const cert = join(dir, 'server.crt');
  await writeFile(pwfile, `${ACCOUNT.password}\n`, { mode: 0o600 });
  // PostgreSQL's own copies: it runs as `postgres` and wants its key private to itself.
  await writeFile(key, readFileSync(tls.serverKeyFile), { mode: 0o600 });
  await writeFile(cert, readFileSync(tls.serverCertFile));
  for (const f of [dir, pwfile, key, cert]) await chown(f, owner.uid, owner.gid);
  const asOwner = { ...owner, cwd: dir, env: { ...process.env, HOME: dir, LC_ALL: 'C' }, logFile: log };
  await run(
    bins.initdb,
    [
      '-D',
      data,
      '-U',
      ACCOUNT.user,
      `--pwfile=${pwfile}`,
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
  const conf = [
    "listen_addresses = '127.0.0.1'",
    `port = ${PORTS.postgres}`,
    `unix_socket_directories = '${dir}'`,
    'ssl = on',
    `ssl_cert_file = '${cert}'`,
    `ssl_key_file = '${key}'`,
    'fsync = off',
    '',
  ];
  await writeFile(join(data, 'postgresql.auto.conf'), conf.join('\n'));
  await writeFile(
    join(data, 'pg_hba.conf'),
    'local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n',
  );
  // ip netns exec needs root; PostgreSQL refuses root, so setpriv drops to its user after setns.
  const server = startServer(
    'postgres-netns',
    exec[0]!,
    [
      ...exec.slice(1),
      'setpriv',
      `--reuid=${owner.uid}`,
      `--regid=${owner.gid}`,
      '--clear-groups',
      bins.postgres,
      '-D',
      data,
    ],
    { cwd: dir, env: asOwner.env, logFile: log, stopSignal: 'SIGINT', exitSignal: 'SIGQUIT' },
  );
  await logSays(server, 'database system is ready to accept connections');
  return server;
}

async function startMariadbIn(exec: string[], dir: string, tls: TlsFiles): Promise<ServerProcess> {
  const bins = findMariadb();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const data = join(dir, 'data');
  const log = join(dir, 'mariadb.log');
  const common = ['--no-defaults', `--datadir=${data}`, '--user=root'];
  await run(
    bins.installDb,
    [...common, '--auth-root-authentication-method=socket', '--skip-test-db', '--skip-name-resolve'],
    { cwd: dir, logFile: log },
  );
  const init = join(dir, 'init.sql');
  const statements = ['127.0.0.1', 'localhost'].flatMap((host) => [
    `CREATE USER '${ACCOUNT.user}'@'${host}' IDENTIFIED BY '${ACCOUNT.password}'`,
    `GRANT ALL PRIVILEGES ON *.* TO '${ACCOUNT.user}'@'${host}'`,
  ]);
  await writeFile(init, [`CREATE DATABASE ${ACCOUNT.database}`, ...statements, ''].join(';\n'));
  const server = startServer(
    'mariadb-netns',
    exec[0]!,
    [
      ...exec.slice(1),
      bins.server,
      ...common,
      `--socket=${join(dir, 'mysqld.sock')}`,
      `--pid-file=${join(dir, 'mysqld.pid')}`,
      `--tmpdir=${dir}`,
      `--log-error=${log}`,
      `--init-file=${init}`,
      '--bind-address=127.0.0.1',
      `--port=${PORTS.mariadb}`,
      '--skip-name-resolve',
      `--ssl-ca=${tls.caCertFile}`,
      `--ssl-cert=${tls.serverCertFile}`,
      `--ssl-key=${tls.serverKeyFile}`,
      '--innodb-flush-log-at-trx-commit=0',
      '--skip-log-bin',
    ],
    { cwd: dir, logFile: join(dir, 'mariadb.out') },
  );
  // The error log is where MariaDB writes that it is up.
  await waitUntilReady(server, async () => {
    try {
      return readFileSync(log, 'utf8').includes('ready for connections');
    } catch {
      return false;
    }
  });
  return server;
}
