import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config/env.ts';
import type { RunningWorker } from '../worker/worker.ts';
import { startEmbeddedStore } from './embedded-store.ts';
import { findTemporalCli, startEmbeddedTemporal } from './embedded-temporal.ts';
import { dynamicConfigArgs } from './temporal-latency.ts';

/** Where serve answers the Temporal codec-server contract (api/rest/temporal-codec.ts). */
const CODEC_PATH = '/temporal/codec';

export interface DevHandle {
  apiUrl: string;
  storeUrl: string;
  temporalAddress: string;
  /** Resolves once the worker polls (it bundles the workflow code first); rejects if it cannot start. */
  workerReady: Promise<void>;
  stop(): Promise<void>;
}

/**
 * `npm run dev`: API and worker in one process, with an embedded store (PGlite) when
 * DATABASE_URL is unset and a local Temporal dev server when TEMPORAL_ADDRESS is unset.
 *
 * Start-up order (target: a second start answers /healthz within 4 s): the Temporal
 * dev server (another process), PGlite and the loading of the API's modules all start at once;
 * the API listens as soon as the store and Temporal answer; the worker, whose workflow bundle
 * takes seconds of CPU to build, starts behind it and says when it polls. Runs started before
 * then wait in Temporal's task queue.
 */
export async function startDev(
  config: Config,
  out: NodeJS.WritableStream = process.stdout,
): Promise<DevHandle> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  try {
    // The API's port is claimed before anything starts: the Temporal dev server binds random free
    // ports for its own services while it comes up, and one of them must not be the port the API
    // is about to listen on. A port that is taken fails the start at once, not after Temporal.
    const releasePort = await claimPort(config.host, config.port);
    stops.push(releasePort);
    const [store, temporal, modules] = await settleAll(
      [
        config.databaseUrl ? Promise.resolve(null) : startEmbeddedStore(config.dataDir),
        config.temporalAddress ? Promise.resolve(null) : startLocalTemporal(config),
        Promise.all([
          import('./boot.ts'),
          import('../api/server.ts'),
          import('../governance/maintenance.ts'),
          import('./local-commands.ts'),
        ]),
      ] as const,
      (started) => {
        // Whatever did start is stopped when another part failed.
        for (const s of started)
          if (s && typeof s === 'object' && 'stop' in s) stops.push((s as { stop(): Promise<void> }).stop);
      },
    );
    const [{ bootstrapAndAnnounce, buildDeps }, { startApi }, { startMaintenance }, { serveLocalCommands }] =
      modules;
    const storeUrl = store?.url ?? config.databaseUrl!;
    const temporalAddress = temporal?.address ?? config.temporalAddress!;
    const temporalUi = temporal?.uiUrl ?? config.temporalUiUrl;
    // The embedded UI calls the codec endpoint from its own origin (CORS with credentials).
    // Worker versioning is off: dev mode's API and worker are one process on one code, with no
    // other release to keep runs away from; versioned, every edit would be a new build id and a
    // run left waiting for an approval would stay pinned to code that no worker runs any more.
    const devConfig: Config = {
      ...config,
      ...(temporalUi ? { temporalUiUrl: temporalUi } : {}),
      workerVersioning: { ...config.workerVersioning, mode: 'off' },
    };
    // PGlite serves one connection at a time: a pool of one.
    const deps = await buildDeps(devConfig, {
      storeUrl,
      storeMax: config.databaseUrl ? 10 : 1,
      temporalAddress,
      dev: true,
    });
    stops.push(async () => {
      await deps.pools.closeAll();
      await deps.sql.end({ timeout: 5 });
      await deps.temporal?.connection.close();
    });
    await bootstrapAndAnnounce(deps, out);
    // The embedded store serves one connection, held here: admin commands run through us.
    if (!config.databaseUrl) stops.push(await serveLocalCommands(config, deps.sql));

    const worker: Promise<RunningWorker> = import('../worker/worker.ts').then(({ startWorker }) =>
      startWorker(deps, temporalAddress),
    );
    // Stopped after the API (stops run in reverse): in-flight requests may still start runs.
    stops.push(async () => (await worker.catch(() => null))?.shutdown());
    await releasePort();
    const api = await startApi(deps);
    stops.push(api.close);
    const stopMaintenance = startMaintenance(deps);
    stops.push(async () => stopMaintenance());
    const stopRunSweep = (await import('../automation/run-sweep.ts')).startRunSweep(deps);
    stops.push(async () => stopRunSweep());
    const stopPreparedSweep = (await import('../automation/prepared-sweep.ts')).startPreparedSweep(deps);
    stops.push(async () => stopPreparedSweep());
    const base = config.baseUrl.includes(`:${config.port}`)
      ? config.baseUrl.replace(`:${config.port}`, `:${api.port}`)
      : config.baseUrl;
    out.write(
      [
        '  Countersign is running (dev mode).',
        `  Web UI:       ${base}/`,
        `  MCP endpoint: ${base}/mcp`,
        `  Temporal UI:  ${temporalUi ?? '(external Temporal: set TEMPORAL_UI_URL)'}`,
        `  Store:        ${config.databaseUrl ? 'DATABASE_URL' : `embedded PGlite in ${join(config.dataDir, 'pgdata')} (${storeUrl})`}`,
        '  Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    const workerReady = worker.then(
      () => {
        out.write('  Worker ready: workflow runs are being picked up.\n');
      },
      (err: unknown) => {
        deps.logger.error({ err }, 'the worker could not start');
        throw err;
      },
    );
    // Observed here so that a caller that never awaits it does not get an unhandled rejection.
    workerReady.catch(() => {});
    return { apiUrl: api.url, storeUrl, temporalAddress, workerReady, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Listens on host:port until the returned function is called (idempotent). Port 0 asks the
 * kernel for a free port when the API listens, so there is nothing to hold.
 */
async function claimPort(host: string, port: number): Promise<() => Promise<void>> {
  if (port === 0) return async () => {};
  // A connection made meanwhile (a health probe, a browser) is dropped at once: the close below
  // waits for every open one, and a held one would stall the start.
  const holder = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen({ host, port, exclusive: true }, resolve);
  });
  let released: Promise<void> | null = null;
  return () => (released ??= new Promise<void>((resolve) => holder.close(() => resolve())));
}

/**
 * Promise.all that waits for every promise to settle before throwing the first failure, handing
 * what did start to `onStarted` either way, so nothing started in parallel is left running.
 */
async function settleAll<const T extends readonly unknown[]>(
  promises: { [K in keyof T]: Promise<T[K]> },
  onStarted: (values: unknown[]) => void,
): Promise<T> {
  const results = await Promise.allSettled(promises);
  onStarted(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

async function startLocalTemporal(config: Config) {
  const cli = await findTemporalCli(config.temporalCliPath);
  if (cli)
    return startEmbeddedTemporal(cli, config.dataDir, { codecEndpoint: `${config.baseUrl}${CODEC_PATH}` });
  // No CLI here: @temporalio/testing downloads the dev server (needs network access).
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ui: true,
      dbFilename: join(config.dataDir, 'temporal.db'),
      extraArgs: [...dynamicConfigArgs(), '--ui-codec-endpoint', `${config.baseUrl}${CODEC_PATH}`],
    },
  });
  const address = env.address;
  return { address, uiUrl: 'http://127.0.0.1:8233', stop: () => env.teardown() };
}
