// Starts the real servers the integration tests and benchmarks run against: PostgreSQL and MariaDB
// (both with TLS), ClickHouse and the Temporal dev server, in parallel, in one fresh temp dir, on
// free ports. No vitest here: bench/ calls this directly.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findClickhouse, startClickhouse } from './clickhouse.ts';
import { findMariadb, startMariadb } from './mariadb.ts';
import { findPostgres, startPostgres } from './postgres.ts';
import {
  findExecutable,
  freePorts,
  MissingBinaryError,
  onProcessExit,
  type ServerProcess,
} from './process.ts';
import type { TestServers } from './servers.ts';
import { findTemporal, startTemporal } from './temporal.ts';
import { makeTls } from './tls.ts';

/** Accounts on every server. Fixed rather than random so a developer can connect by hand. */
export const ACCOUNT = {
  user: 'countersign',
  password: 'countersign-test-pw',
  database: 'countersign',
  certUser: 'certuser',
} as const;

export interface StartOptions {
  /** Where the one-line-per-server summary goes; default console.log. */
  log?: (line: string) => void;
}

export interface StartedServers {
  servers: TestServers;
  /** The temp dir holding data, logs and TLS files (removed by stop()). */
  dir: string;
  /** Stops every server and removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts all four servers; throws (after cleaning up) if a binary is missing or a server fails. */
export async function startServers(opts: StartOptions = {}): Promise<StartedServers> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const started = Date.now();
  await checkBinaries();

  const dir = mkdtempSync(join(tmpdir(), 'countersign-test-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to reach its subdir.
  chmodSync(dir, 0o711);
  const removeDir = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  const cancelExitHook = onProcessExit(removeDir);

  const procs: ServerProcess[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(procs.map((p) => p.stop()));
    removeDir();
    cancelExitHook();
  };

  try {
    const tls = await makeTls(join(dir, 'tls'), ACCOUNT.certUser);
    const sub = (name: string) => join(dir, name);
    const results = await Promise.allSettled([
      onFreePorts(1, sub('postgres'), procs, (d, [port]) =>
        startPostgres({ dir: d, port: port!, tls, account: ACCOUNT }),
      ),
      onFreePorts(1, sub('mariadb'), procs, (d, [port]) =>
        startMariadb({ dir: d, port: port!, tls, account: ACCOUNT }),
      ),
      onFreePorts(1, sub('clickhouse'), procs, (d, [port]) =>
        startClickhouse({ dir: d, httpPort: port!, account: ACCOUNT }),
      ),
      onFreePorts(2, sub('temporal'), procs, (d, [port, uiPort]) =>
        startTemporal({ dir: d, port: port!, uiPort: uiPort! }),
      ),
    ]);
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [errorText(r.reason)] : []));
    if (failures.length > 0) throw new Error(`test servers failed to start:\n\n${failures.join('\n\n')}`);
    const [pg, my, ch, temporal] = [
      fulfilled(results[0]),
      fulfilled(results[1]),
      fulfilled(results[2]),
      fulfilled(results[3]),
    ];

    log(`harness: postgres ${pg.version} on 127.0.0.1:${pg.server.port} (TLS)`);
    log(`harness: mariadb ${my.version} on 127.0.0.1:${my.server.port} (TLS)`);
    log(`harness: clickhouse ${ch.server.version} on http://127.0.0.1:${ch.server.httpPort}`);
    log(
      `harness: temporal ${temporal.version} on ${temporal.server.address} (UI http://127.0.0.1:${temporal.server.uiPort})`,
    );
    log(`harness: started in ${((Date.now() - started) / 1000).toFixed(1)} s; data and logs in ${dir}`);

    return {
      servers: { postgres: pg.server, mariadb: my.server, clickhouse: ch.server, temporal: temporal.server },
      dir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Starts a server on ports that were free a moment ago. Nothing holds a port between our probe and
 * the server's bind (another run's server may take it), so on "address already in use" try again
 * on new ports in a fresh dir.
 */
async function onFreePorts<T extends { process: ServerProcess }>(
  count: number,
  dir: string,
  procs: ServerProcess[],
  start: (dir: string, ports: number[]) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(count);
    try {
      const started = await start(attempt === 1 ? dir : `${dir}-${attempt}`, ports);
      procs.push(started.process);
      return started;
    } catch (err) {
      if (attempt >= 3 || !/address already in use/i.test(errorText(err))) throw err;
    }
  }
}

/** Every missing binary in one error, so one run tells the whole story. */
async function checkBinaries(): Promise<void> {
  const checks: Array<() => unknown> = [
    () => {
      if (!findExecutable(['openssl']))
        throw new MissingBinaryError('openssl not found: apt-get install openssl');
    },
    findPostgres,
    findMariadb,
    findClickhouse,
    findTemporal,
  ];
  const missing: string[] = [];
  for (const check of checks) {
    try {
      await check();
    } catch (err) {
      if (!(err instanceof MissingBinaryError)) throw err;
      missing.push(`- ${err.message}`);
    }
  }
  if (missing.length > 0) {
    throw new MissingBinaryError(
      `integration tests need real servers, and some are not installed:\n${missing.join('\n')}\n` +
        'As root, bash test/setup-deps.sh installs all of them (npm test runs it first).',
    );
  }
}

function fulfilled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
