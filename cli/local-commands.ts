// The local command channel of dev mode: the embedded PGlite store serves one
// connection, which the running service holds, so `countersign create-user` and the other admin
// commands hand their command line to the dev process, which runs it with its own store
// connection. The channel is a Unix socket in the data folder, readable and writable by its owner
// only (0600) — the folder already holds the store and the encryption key, so whoever can reach
// the socket could read those anyway.
import { chmod, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config/env.ts';
import type { Sql } from '../store/db.ts';
import { ADMIN_COMMANDS, runAdminCommand } from './admin-commands.ts';

const MAX_REQUEST_BYTES = 64 * 1024;

export function localCommandSocket(dataDir: string): string {
  return join(dataDir, 'cli.sock');
}

/** Serves admin commands for CLI processes on the same machine; returns a stop function. */
export async function serveLocalCommands(config: Config, sql: Sql): Promise<() => Promise<void>> {
  const path = localCommandSocket(config.dataDir);
  // A socket file left by a dev process that was killed: nothing listens on it any more.
  await rm(path, { force: true });
  const server = createServer((socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_REQUEST_BYTES) return socket.destroy();
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      socket.pause();
      void answer(buffered.slice(0, newline)).then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    });
    socket.on('error', () => socket.destroy());
  });
  async function answer(line: string): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    let request: { command?: unknown; args?: unknown };
    try {
      request = JSON.parse(line) as typeof request;
    } catch {
      return { code: 2, out, err: 'malformed request\n' };
    }
    const { command, args } = request;
    if (typeof command !== 'string' || !(command in ADMIN_COMMANDS) || !Array.isArray(args))
      return { code: 2, out, err: 'not an admin command\n' };
    const code = await runAdminCommand(
      command,
      args.map(String),
      config,
      { out: { write: (t: string) => (out += t) }, withStore: (fn) => fn(sql) },
      { write: (t: string) => (err += t) },
    );
    return { code, out, err };
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  await chmod(path, 0o600);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
    });
}

/**
 * Hands a command to a running dev process. Null when none listens (no socket, or a stale one),
 * so the caller opens the store itself.
 */
export function sendLocalCommand(
  dataDir: string,
  command: string,
  args: string[],
): Promise<{ code: number; out: string; err: string } | null> {
  return new Promise((resolve) => {
    const socket = createConnection(localCommandSocket(dataDir));
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ command, args })}\n`));
    socket.on('data', (chunk: string) => {
      reply += chunk;
    });
    socket.on('end', () => {
      try {
        resolve(JSON.parse(reply) as { code: number; out: string; err: string });
      } catch {
        resolve({ code: 1, out: '', err: 'the dev process answered nothing readable\n' });
      }
    });
    socket.on('error', () => resolve(null));
  });
}
