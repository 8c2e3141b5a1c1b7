// Small process helpers shared by the server starters: find a binary, pick a free port, run a
// setup command, keep a server running with its log in the temp dir, and kill what we started
// even when the run is interrupted. No vitest here: bench/ uses the harness too.
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { delimiter, join } from 'node:path';

/** A server binary that is not installed; the message says how to install it. */
export class MissingBinaryError extends Error {
  override name = 'MissingBinaryError';
}

/** First executable among `names` on PATH or in `extraDirs` (absolute names are checked as they are). */
export function findExecutable(names: string[], extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs];
  for (const name of names) {
    const candidates = name.includes('/') ? [name] : dirs.map((dir) => join(dir, name));
    for (const file of candidates) {
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not here; keep looking
      }
    }
  }
  return undefined;
}

/**
 * `count` distinct ports that were free a moment ago on `host`: the kernel picks them when we bind
 * port 0, and all are held at once so none is handed out twice.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const held = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, host, () => resolve(srv));
        }),
    ),
  );
  const ports = held.map((srv) => {
    const addr = srv.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  });
  await Promise.all(held.map((srv) => new Promise((resolve) => srv.close(resolve))));
  if (ports.includes(0)) throw new Error('could not read a bound port');
  return ports;
}

/** The last `lines` lines of a log file, or a note when there is none yet. */
export function logTail(file: string, lines = 25): string {
  try {
    const text = readFileSync(file, 'utf8').trimEnd();
    return text ? text.split('\n').slice(-lines).join('\n') : '(log is empty)';
  } catch {
    return `(no log at ${file})`;
  }
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Run as this user (PostgreSQL refuses root); libuv also drops supplementary groups. */
  uid?: number;
  gid?: number;
  /** stdout and stderr go here, so a failure can show the tail. */
  logFile: string;
}

/** Runs a setup command to completion; on failure the error carries the tail of its log. */
export async function run(cmd: string, args: string[], opts: SpawnOptions): Promise<void> {
  const child = startLogged(cmd, args, opts, false);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, signal) => resolve(signal ? -1 : c));
  });
  if (code !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited with ${code}; log ${opts.logFile}:\n${logTail(opts.logFile)}`,
    );
  }
}

/** A long-running server process, in its own process group so stop() reaches its children too. */
export interface ServerProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** Set once the process has exited (for early failure during start-up). */
  exited: Promise<string>;
  /** Sends `signal` (default: the server's own stop signal), then SIGKILL to the group after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** Starts a server in its own process group; `stopSignal` is what stop() sends first. */
export function startServer(
  name: string,
  cmd: string,
  args: string[],
  opts: SpawnOptions & {
    stopSignal?: NodeJS.Signals;
    /** Sent when the run ends without stop(); there is no time to wait, so default SIGKILL. */
    exitSignal?: NodeJS.Signals;
  },
): ServerProcess {
  const child = startLogged(cmd, args, opts, true);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      live.delete(child);
      resolve(signal ? `signal ${signal}` : `code ${code}`);
    });
    child.once('error', (err) => {
      done = true;
      live.delete(child);
      resolve(`spawn error: ${err.message}`);
    });
  });
  live.set(child, opts.exitSignal ?? 'SIGKILL');
  installExitHooks();
  return {
    name,
    child,
    logFile: opts.logFile,
    exited,
    async stop(signal = opts.stopSignal ?? 'SIGTERM', graceMs = 5000) {
      if (done) return;
      killGroup(child, signal);
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // Whatever the server forked (postgres backends) goes with the group.
      killGroup(child, 'SIGKILL');
    },
  };
}

/**
 * Polls `check` until it resolves truthy. Fails early when the server exits and after `timeoutMs`,
 * each time with the tail of the server's log, since that is where the reason is.
 */
export async function waitUntilReady(
  server: ServerProcess,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: string | undefined;
  void server.exited.then((how) => {
    exitedWith = how;
  });
  let lastError = '';
  for (;;) {
    if (exitedWith) {
      throw new Error(
        `${server.name} exited (${exitedWith}) during start-up; log ${server.logFile}:\n${logTail(server.logFile)}`,
      );
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${server.name} did not become ready in ${timeoutMs / 1000}s (last error: ${lastError || 'none'}); ` +
          `log ${server.logFile}:\n${logTail(server.logFile)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function startLogged(cmd: string, args: string[], opts: SpawnOptions, detached: boolean): ChildProcess {
  const fd = openSync(opts.logFile, 'a');
  try {
    return spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      uid: opts.uid,
      gid: opts.gid,
      stdio: ['ignore', fd, fd],
      detached,
    });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(fd);
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

// Servers still running. If the run ends without teardown (Ctrl-C, an uncaught error, vitest
// exiting early) they would keep ports and temp dirs busy, so kill them on the way out.
const live = new Map<ChildProcess, NodeJS.Signals>();
const exitCallbacks: Array<() => void> = [];
let hooksInstalled = false;

/** Runs `fn` synchronously when the process exits or is interrupted (e.g. removing the temp dir). */
export function onProcessExit(fn: () => void): () => void {
  installExitHooks();
  exitCallbacks.push(fn);
  return () => {
    const i = exitCallbacks.indexOf(fn);
    if (i >= 0) exitCallbacks.splice(i, 1);
  };
}

function killAllNow(): void {
  for (const [child, signal] of live) killGroup(child, signal);
  live.clear();
  for (const fn of exitCallbacks.splice(0)) {
    try {
      fn();
    } catch {
      // best effort on the way out
    }
  }
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAllNow();
      // Only re-raise when nobody else (vitest) handles the signal, so default behaviour stays.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.once(signal, onSignal);
  }
}
