// A TCP proxy on loopback in front of a server, which a test can cut (listener closed, every
// connection reset: what a process sees when its database goes away) and restore.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(host: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const make = (): Server =>
    createServer((client) => {
      track(client);
      const upstream = connect(targetPort, host);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  let server = make();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const cut = async () => {
    const closed = new Promise((r) => server.close(r));
    for (const s of sockets) s.resetAndDestroy();
    await closed;
  };
  return {
    port,
    cut,
    async restore() {
      server = make();
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    close: cut,
  };
}
