// Access decisions kept in memory between requests (issue 14), and thrown away the moment the
// rows they were read from change. What is cached: the OAuth grant behind an MCP token
// (store/oauth.ts findGrantCaller), the access statement (store/grants.ts findAccessTarget) and
// a data-protection policy with its rules. Every table those reads join carries a trigger
// (store/migrations/0021_access_changes.sql) that sends NOTIFY on CHANNEL when a statement
// changes it; each process LISTENs and empties its cache on every notification.
//
// Revocation must win the race (issue 14: "a revocation takes effect before the next request can
// observe it"). Three rules give that:
// 1. A read is cached only if no notification arrived while it ran (the generation did not move)
//    and the listener was connected throughout, so a read that saw the old rows is never kept.
// 2. Without a live listener nothing is served from memory: the cache is emptied when the listening
//    connection closes and only used again once LISTEN is re-established.
// 3. A request that may have changed access answers only after `accessBarrier`: it sends a
//    notification of its own and waits until this process and every other one listening (serve
//    replicas, workers) has received it — the others acknowledge on the channel. PostgreSQL
//    delivers notifications of different transactions in commit order (NOTIFY docs), so each
//    process has by then received the change's notification and emptied its cache. api/app.ts
//    calls it after every request that can write.
// Processes find each other on the same channel: each says hello when it starts listening and
// every few seconds (answered with a hello by those that did not know it), and bye when it stops.
// A process that does not acknowledge within the barrier's timeout is forgotten until it says
// hello again, and logged; if it cannot hear the channel at all, rule 2 already keeps it off its
// cache. Changes made outside the service (psql, the admin CLI) wait for no one: each process
// drops its cache when their notification arrives, moments after the commit.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { Logger } from '../core/logger.ts';
import type { Sql, Tx } from './db.ts';

/**
 * The channel. Payloads: '' a change (the triggers); `hello:<process>` and `bye:<process>`;
 * `barrier:<process>:<id>` and its acknowledgements `ack:<id>:<process>`.
 */
export const CHANNEL = 'countersign_access';
/** Entries kept at most; past it the cache starts over (a decision is cheap to read again). */
const LIMIT = 10_000;
/** How long a barrier waits for its own notification before it stops trusting the cache. */
const BARRIER_TIMEOUT_MS = 2_000;
const RELISTEN_MS = 1_000;
/** How often a process says hello, and how long after its last word it counts as gone. */
const HELLO_MS = 5_000;
const PEER_TTL_MS = 15_000;

interface PendingBarrier {
  heardOwn: boolean;
  waitingFor: Set<string>;
  done: () => void;
}

export class AccessCache {
  readonly #entries = new Map<string, { value: unknown; generation: number }>();
  readonly #barriers = new Map<string, PendingBarrier>();
  /** Other listening processes, by id, with when each was last heard from. */
  readonly #peers = new Map<string, number>();
  readonly #id = randomUUID();
  #hello: NodeJS.Timeout | null = null;
  #heardHello: (() => void) | null = null;
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
      // Trusted only once it hears itself: behind a pooler in transaction mode LISTEN succeeds
      // and yet nothing is ever delivered to it.
      const heard = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
        this.#heardHello = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      await this.#say(`hello:${this.#id}`);
      const deaf = !(await heard);
      this.#heardHello = null;
      if (deaf) throw new Error(`LISTEN ${CHANNEL} succeeded but its own notification never arrived`);
      // Whatever changed before LISTEN took effect was never notified: start from nothing.
      this.#flush();
      this.#live = true;
      if (!this.#hello) {
        this.#hello = setInterval(() => this.#live && this.#say(`hello:${this.#id}`), HELLO_MS);
        this.#hello.unref();
      }
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

  /** Rule 3: resolves once every listening process has dropped what earlier commits made stale. */
  async barrier(sql: Tx): Promise<void> {
    if (!this.#live) return;
    const id = randomUUID();
    const now = Date.now();
    const waitingFor = new Set(
      [...this.#peers].filter(([, seen]) => now - seen < PEER_TTL_MS).map(([p]) => p),
    );
    let pending: PendingBarrier | undefined;
    const finished = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
      pending = {
        heardOwn: false,
        waitingFor,
        done: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.#barriers.set(id, pending);
    });
    await sql`select pg_notify(${CHANNEL}, ${`barrier:${this.#id}:${id}`})`;
    const complete = await finished;
    this.#barriers.delete(id);
    if (complete) return;
    if (!pending!.heardOwn) {
      // The listener no longer hears us: stop trusting memory until it listens again.
      this.#logger.warn('access cache: a barrier was not delivered; listening again');
      this.#lost();
    }
    if (pending!.waitingFor.size > 0) {
      this.#logger.warn(
        { processes: pending!.waitingFor.size },
        'access cache: processes did not acknowledge a barrier in time; forgotten until they say hello',
      );
      for (const peer of pending!.waitingFor) this.#peers.delete(peer);
    }
  }

  async close(): Promise<void> {
    if (this.#live) await this.#say(`bye:${this.#id}`);
    this.#closed = true;
    this.#live = false;
    if (this.#relisten) clearTimeout(this.#relisten);
    if (this.#hello) clearInterval(this.#hello);
    this.#flush();
    await this.#listener.end({ timeout: 1 });
  }

  #notified(payload: string): void {
    if (payload === '') {
      this.#flush();
      return;
    }
    const [kind, a = '', b = ''] = payload.split(':');
    if (kind === 'hello' && a === this.#id) {
      this.#heardHello?.();
    } else if (kind === 'hello') {
      const known = this.#peers.has(a);
      this.#peers.set(a, Date.now());
      // A newcomer learns of this process at once rather than at its next hello.
      if (!known) this.#say(`hello:${this.#id}`);
    } else if (kind === 'bye') {
      this.#peers.delete(a);
    } else if (kind === 'barrier') {
      // Every notification committed before the barrier has been handled by now (commit order).
      if (a === this.#id) {
        this.#settle(b, (p) => {
          p.heardOwn = true;
        });
      } else this.#say(`ack:${b}:${this.#id}`);
    } else if (kind === 'ack') {
      this.#peers.set(b, Date.now());
      this.#settle(a, (p) => p.waitingFor.delete(b));
    } else {
      // Anything else on the channel is taken as a change: emptying is always safe.
      this.#flush();
    }
  }

  #settle(barrier: string, update: (p: PendingBarrier) => void): void {
    const pending = this.#barriers.get(barrier);
    if (!pending) return;
    update(pending);
    if (pending.heardOwn && pending.waitingFor.size === 0) pending.done();
  }

  /** Sends on the channel from the listening connection (failures only cost a peer a wait). */
  async #say(payload: string): Promise<void> {
    await this.#listener`select pg_notify(${CHANNEL}, ${payload})`.catch(() => {});
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
