// Access decisions kept in memory between requests, and thrown away the moment the
// rows they were read from change. What is cached: the OAuth grant behind an MCP token
// (store/oauth.ts findGrantCaller), the API key, personal token or session a request signs in
// with and its person (identity/authenticate.ts), the access statement (store/grants.ts
// findAccessTarget) and a data-protection policy with its rules. Every table those reads join
// carries a trigger (store/migrations/0021_access_changes.sql, 0034_credential_changes.sql)
// that sends NOTIFY when a statement changes it; each process listens (store/access-channel.ts)
// and empties its cache on every notification.
//
// Revocation must win the race ("a revocation takes effect before the next request can
// observe it"). Three rules give that:
// 1. A read is cached only if no notification arrived while it ran (the generation did not move)
//    and the channel was trusted throughout, so a read that saw the old rows is never kept.
// 2. Memory is used only while the channel is trusted: listening, and this process heard its own
//    probe within the lease (1.5 s). A closed connection, one gone quiet without closing, or a
//    stalled event loop loses the lease; the cache is emptied whenever listening stops.
// 3. A request that may have changed access answers only after `accessBarrier`: this process and
//    every other listener PostgreSQL knows of have handled every notification committed before
//    it, or (past a 2 s timeout, longer than the lease) no longer trust their memory.
//    api/middleware/access-settled.ts calls it after every request that can write.
// Changes made outside the service (psql, the admin CLI) wait for no one: each process drops its
// cache when their notification arrives, moments after the commit.
import type { Logger } from '../core/logger.ts';
import { AccessChannel } from './access-channel.ts';
import type { Sql, Tx } from './db.ts';

export { CHANNEL } from './access-channel.ts';

/** Entries kept at most; past it the least recently used goes. */
const LIMIT = 10_000;
/** A read older than this is not joined: one slow or stuck read holds up only those it has. */
const JOIN_MS = 1_000;

export class AccessCache {
  /** In order of last use, oldest first (a Map iterates in insertion order). */
  readonly #entries = new Map<string, { value: unknown; generation: number }>();
  /** Reads in flight, so concurrent misses of one key read the store once. */
  readonly #loading = new Map<string, { promise: Promise<unknown>; generation: number; at: number }>();
  readonly #channel: AccessChannel;
  readonly #limit: number;
  #generation = 0;

  constructor(url: string, logger: Logger, options: { limit?: number } = {}) {
    this.#channel = new AccessChannel(url, logger, () => this.#flush());
    this.#limit = Math.max(1, options.limit ?? LIMIT);
  }

  /** Starts listening; resolves once the channel is trusted, or has logged why it is not. */
  start(): Promise<void> {
    return this.#channel.start();
  }

  /** Whether decisions may be served from memory now (rule 2). */
  get live(): boolean {
    return this.#channel.trusted;
  }

  /**
   * The cached value of `key`, else `load()`'s, kept when rule 1 allows. A miss joins a read of
   * the same key already in flight only if no change was notified since that read began: a
   * request that starts after a revocation was handled never gets what was read before it.
   * `keep` may refuse a value (a credential id that matched nothing: anyone can send those, and
   * kept they would push real decisions out).
   */
  async read<T>(key: string, load: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
    if (!this.#channel.trusted) return load().then(deepFreeze);
    const generation = this.#generation;
    const hit = this.#entries.get(key);
    if (hit && hit.generation === generation) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit.value as T;
    }
    const inFlight = this.#loading.get(key);
    if (inFlight && inFlight.generation === generation && performance.now() - inFlight.at < JOIN_MS)
      return inFlight.promise as Promise<T>;
    // Frozen before anyone gets it: callers that joined share the one object.
    const promise = load().then(deepFreeze);
    const loading = { promise, generation, at: performance.now() };
    this.#loading.set(key, loading);
    try {
      const value = await promise;
      if (this.#channel.trusted && this.#generation === generation && keep(value)) {
        if (this.#entries.size >= this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
        this.#entries.set(key, { value, generation });
      }
      return value;
    } finally {
      if (this.#loading.get(key) === loading) this.#loading.delete(key);
    }
  }

  /** How many decisions are held now (tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** Rule 3. */
  barrier(sql: Tx): Promise<void> {
    return this.#channel.barrier(sql);
  }

  async close(): Promise<void> {
    await this.#channel.close();
    this.#flush();
  }

  #flush(): void {
    this.#generation++;
    this.#entries.clear();
    // Reads in flight stay, for their own callers; none is joined or kept across a change.
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
export function cachedAccessRead<T>(
  sql: Tx,
  key: string,
  load: () => Promise<T>,
  keep?: (value: T) => boolean,
): Promise<T> {
  const cache = caches.get(sql);
  return cache ? cache.read(key, load, keep) : load();
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
