import { join } from 'node:path';
import { startApi } from '../api/server.ts';
import type { Config } from '../config/env.ts';
import { startMaintenance } from '../governance/maintenance.ts';
import { startWorker } from '../worker/worker.ts';
import { bootstrapAndAnnounce, buildDeps } from './boot.ts';
import { startEmbeddedStore } from './embedded-store.ts';
import { findTemporalCli, startEmbeddedTemporal } from './embedded-temporal.ts';
import { serveLocalCommands } from './local-commands.ts';

export interface DevHandle {
  apiUrl: string;
  storeUrl: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

/**
 * `npm run dev`: API and worker in one process, with an embedded store (PGlite) when
 * DATABASE_URL is unset and a local Temporal dev server when TEMPORAL_ADDRESS is unset.
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
    let storeUrl = config.databaseUrl;
    if (!storeUrl) {
      const store = await startEmbeddedStore(config.dataDir);
      stops.push(store.stop);
      storeUrl = store.url;
    }
    let temporalAddress = config.temporalAddress;
    let temporalUi = config.temporalUiUrl;
    if (!temporalAddress) {
      const embedded = await startLocalTemporal(config);
      stops.push(embedded.stop);
      temporalAddress = embedded.address;
      temporalUi = embedded.uiUrl;
    }
    // PGlite serves one connection at a time: a pool of one.
    const deps = await buildDeps(config, {
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
    const worker = await startWorker(deps, temporalAddress);
    stops.push(worker.shutdown);
    const api = await startApi(deps);
    stops.push(api.close);
    const stopMaintenance = startMaintenance(deps);
    stops.push(async () => stopMaintenance());
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
    return { apiUrl: api.url, storeUrl, temporalAddress, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function startLocalTemporal(config: Config) {
  const cli = await findTemporalCli(config.temporalCliPath);
  if (cli) return startEmbeddedTemporal(cli, config.dataDir);
  // No CLI here: @temporalio/testing downloads the dev server (needs network access).
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { ui: true, dbFilename: join(config.dataDir, 'temporal.db') },
  });
  const address = env.address;
  return { address, uiUrl: 'http://127.0.0.1:8233', stop: () => env.teardown() };
}
