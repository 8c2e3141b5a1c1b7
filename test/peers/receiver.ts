// A local HTTP API that API steps call. Records every request; answers per path with a handler the
// test sets (default 200 {"ok":true}).
import type { IncomingMessage } from 'node:http';
import { listen, readBody, sendJson } from './http-util.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Reply = { status: number; body: unknown; delayMs?: number };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  on(path: string, reply: (req: ReceivedRequest) => Reply | Promise<Reply>): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const handlers = new Map<string, (req: ReceivedRequest) => Reply | Promise<Reply>>();
  const server = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const received = {
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      headers: req.headers,
      body: await readBody(req),
    };
    requests.push(received);
    const handler = handlers.get(url.pathname);
    const reply = handler ? await handler(received) : { status: 200, body: { ok: true } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (typeof reply.body === 'string') {
      res.writeHead(reply.status, { 'content-type': 'text/plain' });
      res.end(reply.body);
    } else sendJson(res, reply.status, reply.body);
  });
  return { url: server.url, requests, on: (path, reply) => handlers.set(path, reply), close: server.close };
}
