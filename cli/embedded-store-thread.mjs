// Dev mode's PGlite and its socket server, in a worker thread (cli/embedded-store.ts). Plain
// JavaScript: it imports only PGlite, so it needs no TypeScript loader in the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dir, port } = workerData;
const db = await PGlite.create(dir);
const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port });
await server.start();
parentPort.postMessage({ port: server.server?.address()?.port ?? port });
parentPort.once('message', async () => {
  await server.stop();
  await db.close();
  parentPort.close();
});
