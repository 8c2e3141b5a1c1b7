import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface EmbeddedStore {
  /** A postgres:// URL that postgres.js (pool of one) and psql can use while dev mode runs. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Dev mode's store: PGlite (real Postgres compiled to WASM) kept in the data folder, so a
 * restart keeps its state, and served over a loopback socket so the service talks to it with
 * the same postgres.js code as in production. PGlite serves one connection at a time.
 *
 * It runs in a worker thread: opening it is a second of CPU that would otherwise share the main
 * thread with loading the service's modules at start (dev mode's start time), and its
 * statements then run beside the service's JavaScript rather than between it.
 */
export async function startEmbeddedStore(dataDir: string, port = 0): Promise<EmbeddedStore> {
  const dir = join(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const thread = new Worker(new URL('./embedded-store-thread.mjs', import.meta.url), {
    workerData: { dir, port },
  });
  const exited = once(thread, 'exit');
  const started = await new Promise<{ port: number }>((resolve, reject) => {
    thread.once('message', resolve);
    thread.once('error', reject);
    thread.once('exit', (code) =>
      reject(new Error(`the embedded store stopped while opening (exit ${code})`)),
    );
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${started.port}/postgres`,
    async stop() {
      if (thread.threadId === -1) return;
      thread.postMessage('stop');
      await exited;
    },
  };
}
