// A small pool of lazily made resources, each lent to one caller at a time. The Postgres adapter
// keeps one single-connection client per slot so that a NOTICE can be attributed to the
// statement that raised it (the driver reports notices per client, not per query).
import { AdapterError } from './errors.ts';

interface Waiter<T> {
  resolve(item: T): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** At most `max` items, made on demand; callers wait first come, first served, for a limited time. */
export class Lender<T> {
  private readonly idle: T[] = [];
  private readonly items = new Set<T>();
  private readonly waiters: Waiter<T>[] = [];
  private closed = false;

  constructor(
    private readonly make: () => T,
    private readonly destroy: (item: T) => Promise<void>,
    private readonly max: number,
  ) {}

  /** An idle item, a new one, or the next one released within `timeoutMs`. */
  acquire(timeoutMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new AdapterError('the connection pool is closed', 'connection'));
    const idle = this.idle.pop();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.items.size < this.max) return Promise.resolve(this.create());
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          const seconds = Math.round(timeoutMs / 100) / 10;
          reject(
            new AdapterError(
              `no free connection within ${seconds} s (all ${this.max} busy)`,
              'timeout',
              'TIMEOUT',
            ),
          );
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Gives a healthy item back: to the longest waiter, else to the idle list. */
  release(item: T): void {
    if (this.closed || !this.items.has(item)) return;
    const waiter = this.waiters.shift();
    if (!waiter) {
      this.idle.push(item);
      return;
    }
    clearTimeout(waiter.timer);
    waiter.resolve(item);
  }

  /** Destroys an item that must not be reused; a waiter gets a fresh one in its place. */
  discard(item: T): void {
    if (!this.items.delete(item)) return;
    void this.destroy(item).catch(() => {});
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (!waiter) return;
    clearTimeout(waiter.timer);
    waiter.resolve(this.create());
  }

  /** Fails every waiter and destroys every item, lent or idle. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new AdapterError('the connection pool was closed', 'connection'));
    }
    const items = [...this.items];
    this.items.clear();
    this.idle.length = 0;
    await Promise.all(items.map((item) => this.destroy(item).catch(() => {})));
  }

  /** Items made and not destroyed (lent and idle). */
  get size(): number {
    return this.items.size;
  }

  private create(): T {
    const item = this.make();
    this.items.add(item);
    return item;
  }
}
