import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedStore {
  /** A postgres:// URL that postgres.js (pool of one) and psql can use while dev mode runs. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Dev mode's store: PGlite (real Postgres compiled to WASM) kept in the data folder, so a
 * restart keeps its state, and served over a loopback socket so the service talks to it with
 * the same postgres.js code as in production. PGlite serves one connection at a time.
 */
export async function startEmbeddedStore(dataDir: string, port = 0): Promise<EmbeddedStore> {
  const dir = join(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port });
  await server.start();
  const address = (
    server as unknown as { server?: { address(): { port: number } | null } }
  ).server?.address();
  const actualPort = address?.port ?? port;
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${actualPort}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
