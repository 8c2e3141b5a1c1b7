// ClickHouse for the harness. Debian 12 ships clickhouse-server 18.16 (2018): the config root is
// <yandex>, there is no SQL user management (users live in users.xml), and only the old output
// formats exist (JSON, JSONEachRow, TabSeparated..., not JSONCompactEachRowWithNames).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  findExecutable,
  MissingBinaryError,
  type ServerProcess,
  startServer,
  waitUntilReady,
} from './process.ts';
import type { TestServers } from './servers.ts';

/** How to run the server: Debian's `clickhouse-server`, or the single `clickhouse` binary + `server`. */
export function findClickhouse(): { cmd: string; args: string[] } {
  const server = findExecutable(['clickhouse-server'], ['/usr/sbin', '/usr/local/sbin']);
  if (server) return { cmd: server, args: [] };
  const single = findExecutable(['clickhouse'], ['/usr/sbin', '/usr/local/sbin']);
  if (single) return { cmd: single, args: ['server'] };
  throw new MissingBinaryError(
    'ClickHouse (clickhouse-server) not found: apt-get install clickhouse-server (or bash test/setup-deps.sh as root)',
  );
}

export interface StartedClickhouse {
  server: TestServers['clickhouse'];
  process: ServerProcess;
}

const xml = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Starts ClickHouse (HTTP interface only) in `dir` on `httpPort` with one password user. */
export async function startClickhouse(opts: {
  dir: string;
  httpPort: number;
  account: { user: string; password: string; database: string };
}): Promise<StartedClickhouse> {
  const { dir, httpPort, account } = opts;
  const bin = findClickhouse();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const d = (sub: string) => `${xml(join(dir, sub))}/`;
  // The server's own log goes to the same file as its stdout, so a failed start shows its reason.
  const log = join(dir, 'clickhouse.log');

  // No tcp_port: the drivers here speak HTTP, and an unused listener is one more port to race for.
  await writeFile(
    join(dir, 'config.xml'),
    `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${xml(log)}</log>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <path>${d('data')}</path>
  <tmp_path>${d('tmp')}</tmp_path>
  <user_files_path>${d('user_files')}</user_files_path>
  <format_schema_path>${d('format_schemas')}</format_schema_path>
  <users_config>${xml(join(dir, 'users.xml'))}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
</yandex>
`,
  );
  await writeFile(
    join(dir, 'users.xml'),
    `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <quotas><default/></quotas>
  <users>
    <${account.user}>
      <password>${xml(account.password)}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </${account.user}>
  </users>
</yandex>
`,
  );

  // SIGKILL to stop: on SIGTERM 18.16 waits ~7 s for idle keep-alive connections, and the data is
  // thrown away anyway (it holds no shared memory or other state outside the temp dir).
  const proc = startServer('clickhouse', bin.cmd, [...bin.args, `--config-file=${join(dir, 'config.xml')}`], {
    cwd: dir,
    logFile: log,
    stopSignal: 'SIGKILL',
  });
  const url = `http://127.0.0.1:${httpPort}/`;
  // Credentials as headers: 18.16 accepts X-ClickHouse-User/-Key as well as URL parameters.
  const query = async (sql: string): Promise<string> => {
    const res = await fetch(url, {
      method: 'POST',
      body: sql,
      headers: { 'X-ClickHouse-User': account.user, 'X-ClickHouse-Key': account.password },
      signal: AbortSignal.timeout(2000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`clickhouse ${res.status}: ${text.trim()}`);
    return text.trim();
  };

  try {
    await waitUntilReady(proc, async () => (await query('SELECT 1')) === '1');
    await query(`CREATE DATABASE IF NOT EXISTS \`${account.database}\``);
    const version = await query('SELECT version()');
    const { user, password, database } = account;
    return { server: { host: '127.0.0.1', httpPort, user, password, database, version }, process: proc };
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}
