// The Temporal dev server (`temporal server start-dev`, in-memory) for the harness. One per run:
// test files that each start their own race at start-up (DESIGN.md, Conventions).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { dynamicConfigArgs, LATENCY_DYNAMIC_CONFIG } from '../../cli/temporal-latency.ts';
import {
  findExecutable,
  MissingBinaryError,
  type ServerProcess,
  startServer,
  waitUntilReady,
} from './process.ts';
import type { TestServers } from './servers.ts';

/** Where test/setup-deps.sh builds the CLI (`go install ...cli/cmd/temporal@v1.5.1`). */
export const TEMPORAL_CACHE_BIN = join(homedir(), '.cache', 'countersign', 'bin');

/** Search attributes the workflows set; registered at start so visibility queries can use them. */
export const SEARCH_ATTRIBUTES = { CountersignWorkflowId: 'Keyword', CountersignOrgId: 'Keyword' } as const;

/** The temporal CLI: $TEMPORAL_CLI_PATH, else PATH, else the setup script's cache. */
export function findTemporal(): string {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (existsSync(fromEnv)) return fromEnv;
    throw new MissingBinaryError(
      `TEMPORAL_CLI_PATH=${fromEnv} does not exist: unset it or run bash test/setup-deps.sh`,
    );
  }
  const found = findExecutable(['temporal'], [TEMPORAL_CACHE_BIN]);
  if (!found) {
    throw new MissingBinaryError(
      'Temporal CLI (temporal) not found on PATH or in ~/.cache/countersign/bin: run bash test/setup-deps.sh ' +
        '(builds it with go install github.com/temporalio/cli/cmd/temporal@v1.5.1)',
    );
  }
  return found;
}

export interface StartedTemporal {
  server: TestServers['temporal'];
  version: string;
  process: ServerProcess;
}

/** Starts the dev server on 127.0.0.1:`port` (Web UI on `uiPort`) and waits until the frontend answers. */
export async function startTemporal(opts: {
  dir: string;
  port: number;
  uiPort: number;
  /** false: a bare server as an operator would run it, without Countersign's search attributes. */
  searchAttributes?: boolean;
  /** Dynamic-config values; default: the ones the service relies on for latency (as dev mode). */
  dynamicConfig?: Record<string, number | boolean | string>;
  /** A SQLite file to keep state in (as dev mode does); default in memory. */
  dbFilename?: string;
}): Promise<StartedTemporal> {
  const { dir, port, uiPort } = opts;
  const cli = findTemporal();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const log = join(dir, 'temporal.log');
  const address = `127.0.0.1:${port}`;
  const namespace = 'default';

  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
  ];
  args.push('--log-level', 'warn', '--namespace', namespace);
  args.push(...dynamicConfigArgs(opts.dynamicConfig ?? LATENCY_DYNAMIC_CONFIG));
  if (opts.dbFilename) args.push('--db-filename', opts.dbFilename);
  if (opts.searchAttributes !== false)
    for (const [key, type] of Object.entries(SEARCH_ATTRIBUTES))
      args.push('--search-attribute', `${key}=${type}`);
  // The HTTP API and metrics ports are left to the CLI, which picks free ones itself. Without
  // --db-filename the state is in memory. XDG_CONFIG_HOME keeps the CLI's cluster-id file and
  // any user temporal.yaml/temporal.toml out of the run.
  const env = { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') };
  const proc = startServer('temporal', cli, args, { cwd: dir, env, logFile: log });

  try {
    let version = '';
    await waitUntilReady(proc, async () => {
      const connection = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        const info = await connection.workflowService.getSystemInfo({});
        version = info.serverVersion ?? 'unknown';
        // The namespace is registered a moment after the frontend comes up.
        await connection.workflowService.describeNamespace({ namespace });
      } finally {
        await connection.close();
      }
      return true;
    });
    return { server: { address, namespace, uiPort }, version, process: proc };
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}
