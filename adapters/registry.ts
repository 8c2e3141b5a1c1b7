// One open pool per credential, reused until the credential or its database changes. The version
// is whatever identifies the rows the connection config was built from (governance uses both
// rows' updated_at), so an edited password, host or certificate always gets a fresh pool.
import type { Adapter, AdapterName, AdapterPool, ConnectionConfig } from './types.ts';

/** Which pool: the credential, its database, and the version of the settings it was built from. */
export interface PoolKey {
  databaseId: string;
  credentialId: string;
  version: string;
}

interface Entry {
  key: PoolKey;
  pool: AdapterPool;
}

/** Caches one AdapterPool per credential; closes pools that are replaced or invalidated. */
export class PoolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly adapterFor: (name: AdapterName) => Adapter) {}

  /**
   * The pool for `key`. `config` is called only when a pool is made, so secrets are decrypted
   * once per pool, not per query. A pool of an older version is closed in the background:
   * statements already running on it finish first.
   */
  acquire(key: PoolKey, config: () => ConnectionConfig): AdapterPool {
    const entry = this.entries.get(key.credentialId);
    if (entry && entry.key.version === key.version && entry.key.databaseId === key.databaseId)
      return entry.pool;
    if (entry) this.retire(entry.pool);
    const cfg = config();
    const pool = this.adapterFor(cfg.adapter).connect(cfg);
    this.entries.set(key.credentialId, { key: { ...key }, pool });
    return pool;
  }

  /** Closes the pools of every credential of a database (its settings changed, or it is gone). */
  invalidate(databaseId: string): Promise<void> {
    return this.drop((e) => e.key.databaseId === databaseId);
  }

  /** Closes the pool of one credential (changed or deleted). */
  invalidateCredential(credentialId: string): Promise<void> {
    return this.drop((e) => e.key.credentialId === credentialId);
  }

  /** Closes every pool, including those still closing after a replacement. */
  async closeAll(): Promise<void> {
    await this.drop(() => true);
    await Promise.all(this.closing);
  }

  /** Open pools (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  private async drop(match: (e: Entry) => boolean): Promise<void> {
    const closes: Promise<void>[] = [];
    for (const [id, entry] of this.entries) {
      if (!match(entry)) continue;
      this.entries.delete(id);
      closes.push(this.retire(entry.pool));
    }
    await Promise.all(closes);
  }

  private retire(pool: AdapterPool): Promise<void> {
    // A pool that fails to close is gone either way; its error has nowhere useful to go.
    const done: Promise<void> = pool
      .close()
      .catch(() => {})
      .finally(() => this.closing.delete(done));
    this.closing.add(done);
    return done;
  }
}
