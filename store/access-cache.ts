// Access decisions kept in memory between requests (issue 14), and thrown away the moment the
// rows they were read from change. What is cached: the OAuth grant behind an MCP token
// (store/oauth.ts findGrantCaller), the access statement (store/grants.ts findAccessTarget) and
// a data-protection policy with its rules. Every table those reads join carries a trigger
// (store/migrations/0020_access_changes.sql) that sends NOTIFY on CHANNEL when a statement
// changes it; each process LISTENs and empties its cache on every notification.
//
// Revocation must win the race (issue 14: "a revocation takes effect before the next request can
// observe it"). Three rules give that:
// 1. A read is cached only if no notification arrived while it ran (the generation did not move)
//    and the listener was connected throughout, so a read that saw the old rows is never kept.
// 2. Without a live listener nothing is served from memory: the cache is emptied when the listening
//    connection closes and only used again once LISTEN is re-established.
// 3. A request that may have changed access answers only after `accessBarrier`: it sends a
//    notification of its own and waits to receive it. PostgreSQL delivers notifications of
//    different transactions in commit order (NOTIFY docs), so by then the notification of the
//    change has been received and the cache emptied. api/app.ts calls it after every request
//    that can write.
// Other processes (another serve replica, the worker) receive the same notification when the
// change commits; README "Access-decision cache" states that bound.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { Logger } from '../core/logger.ts';
import type { Sql, Tx } from './db.ts';

/** The channel the triggers notify (payload ''), and barriers use (payload 'barrier:<id>'). */
export const CHANNEL = 'countersign_access';
const BARRIER = 'barrier:';
/** Entries kept at most; past it the cache starts over (a decision is cheap to read again). */
const LIMIT = 10_000;
/** How long a barrier waits for its own notification before it stops trusting the cache. */
const BARRIER_TIMEOUT_MS = 2_000;
const RELISTEN_MS = 1_000;

export class AccessCache {
  readonly #entries = new Map<string, { value: unknown; generation: number }>();
  readonly #barriers = new Map<string, () => void>();
  readonly #listener: postgres.Sql;
  readonly #logger: Logger;
  #generation = 0;
  #live = false;
  #closed = false;
  #relisten: NodeJS.Timeout | null = null;

  constructor(url: string, logger: Logger) {
    this.#logger = logger;
    // A connection of its own that only listens: LISTEN holds it for as long as it lives.
    // `onnotify` is postgres.js's hook for notifications on connections of our own (its typings omit it).
    const options = {
      max: 1,
      // Never closed for idleness or age (0 turns both timers off).
      idle_timeout: 0,
      max_lifetime: 0,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: 'countersign-access-listener' },
      onnotify: (channel: string, payload: string) => {
        if (channel === CHANNEL) this.#notified(payload);
      },
      onclose: () => this.#lost(),
    };
    this.#listener = postgres(url, options as postgres.Options<Record<string, never>>);
  }

  /** Connects the listener; resolves once notifications are being received (or failing, logged). */
  async start(): Promise<void> {
    try {
      await this.#listener.unsafe(`listen ${CHANNEL}`);
      // Whatever changed before LISTEN took effect was never notified: start from nothing.
      this.#flush();
      this.#live = true;
    } catch (err) {
      this.#logger.warn(
        { err: { name: (err as Error).name, message: (err as Error).message } },
        'access cache: cannot listen for changes; access decisions are read on every request',
      );
      this.#scheduleRelisten();
    }
  }

  /** Whether decisions may be served from memory now. */
  get live(): boolean {
    return this.#live;
  }

  /** The cached value of `key`, else `load()`'s, kept when rule 1 above allows. */
  async read<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (!this.#live) return load();
    const generation = this.#generation;
    const hit = this.#entries.get(key);
    if (hit && hit.generation === generation) return hit.value as T;
    const value = await load();
    if (this.#live && this.#generation === generation) {
      if (this.#entries.size >= LIMIT) this.#entries.clear();
      this.#entries.set(key, { value: deepFreeze(value), generation });
    }
    return value;
  }

  /** Rule 3: resolves once every change committed before this call has emptied the cache. */
  async barrier(sql: Tx): Promise<void> {
    if (!this.#live) return;
    const id = randomUUID();
    const received = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#barriers.delete(id);
        resolve(false);
      }, BARRIER_TIMEOUT_MS);
      this.#barriers.set(id, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    await sql`select pg_notify(${CHANNEL}, ${BARRIER + id})`;
    if (!(await received)) {
      // The listener no longer hears us: stop trusting memory until it listens again.
      this.#logger.warn('access cache: a barrier was not delivered; listening again');
      this.#lost();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#live = false;
    if (this.#relisten) clearTimeout(this.#relisten);
    this.#flush();
    await this.#listener.end({ timeout: 1 });
  }

  #notified(payload: string): void {
    if (payload.startsWith(BARRIER)) {
      // Another process's barrier is no change; ours has now passed every earlier notification.
      this.#barriers.get(payload.slice(BARRIER.length))?.();
      return;
    }
    this.#flush();
  }

  #flush(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** Rule 2: the listening connection is gone (or deaf); nothing is trusted until it is back. */
  #lost(): void {
    this.#live = false;
    this.#flush();
    if (!this.#closed) this.#scheduleRelisten();
  }

  #scheduleRelisten(): void {
    if (this.#relisten || this.#closed) return;
    this.#relisten = setTimeout(() => {
      this.#relisten = null;
      void this.start();
    }, RELISTEN_MS);
    this.#relisten.unref();
  }
}

/** The cache of each root store pool; a transaction (another object) never reads through one. */
const caches = new WeakMap<object, AccessCache>();

/** Starts the access cache of a store pool (cli/boot.ts, for long-running processes on PostgreSQL). */
export async function startAccessCache(sql: Sql, url: string, logger: Logger): Promise<AccessCache> {
  const cache = new AccessCache(url, logger);
  await cache.start();
  caches.set(sql, cache);
  return cache;
}

/**
 * Reads an access decision through the pool's cache. Inside a transaction, or where no cache was
 * started, it simply reads: a transaction must see its own writes.
 */
export function cachedAccessRead<T>(sql: Tx, key: string, load: () => Promise<T>): Promise<T> {
  const cache = caches.get(sql);
  return cache ? cache.read(key, load) : load();
}

/** Rule 3 for the pool's cache, if it has one. */
export async function accessBarrier(sql: Tx): Promise<void> {
  await caches.get(sql)?.barrier(sql);
}

/** Cached rows are shared by every later request: freezing them makes a stray mutation fail loudly. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (value instanceof Date || value instanceof Uint8Array) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}
