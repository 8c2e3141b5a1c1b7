// The channel behind the access cache (store/access-cache.ts): one LISTEN connection per process
// on `countersign_access`, which tells the cache when access rows changed, whether it may trust
// its memory at all (a lease renewed by hearing itself), and makes barriers across processes.
//
// Payloads: '' a change (the triggers of store/migrations/0021_access_changes.sql);
// `probe:<n>:<pid>` a process hearing itself (its n-th probe); `barrier:<pid>:<id>` and `ack:<id>:<pid>`; `bye:<pid>`.
// <pid> is the listening connection's server process id, written by the server itself
// (pg_backend_pid()), and barriers learn who must answer from pg_stat_activity: membership
// comes from PostgreSQL, not from what processes say of themselves.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { Logger } from '../core/logger.ts';
import type { Tx } from './db.ts';

export const CHANNEL = 'countersign_access';
export const LISTENER_NAME = 'countersign-access-listener';
/** How often a process probes itself, and how long one heard probe lets it trust its memory. */
const PROBE_MS = 500;
export const LEASE_MS = 1_500;
/** Hearing nothing of itself for this long, a process takes its connection for dead and reconnects. */
const DEAF_MS = 5_000;
/** How long a barrier waits for the acknowledgements; longer than the lease (see `barrier`). */
export const BARRIER_TIMEOUT_MS = 2_000;
const RELISTEN_MS = 1_000;

interface PendingBarrier {
  needOwn: boolean;
  heardOwn: boolean;
  /** Listening processes that must acknowledge; null until the barrier's statement returned. */
  waitingFor: Set<string> | null;
  acked: Set<string>;
  done(): void;
}

export class AccessChannel {
  readonly #logger: Logger;
  readonly #url: string;
  /** Called on every change notification and whenever the channel stops being trusted. */
  readonly #changed: () => void;
  readonly #barriers = new Map<string, PendingBarrier>();
  #listener: postgres.Sql | null = null;
  #pid: string | null = null;
  #listening = false;
  /**
   * performance.now() when the newest probe this process has heard was sent. The lease counts
   * from the sending, not the hearing: a probe that arrives late proves only that everything
   * committed before it was sent has arrived, so a listener whose notifications come seconds
   * late must not trust its memory on them (a barrier elsewhere gives up on it after 2 s).
   */
  #heardAt = Number.NEGATIVE_INFINITY;
  #probes = 0;
  /** When each probe not yet heard was sent, by number. */
  readonly #probesSent = new Map<number, number>();
  #heardProbe: (() => void) | null = null;
  #probe: NodeJS.Timeout | null = null;
  #relisten: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(url: string, logger: Logger, changed: () => void) {
    this.#url = url;
    this.#logger = logger;
    this.#changed = changed;
  }

  /**
   * Whether memory may be used now: listening, and this process heard its own probe within the
   * lease. A connection gone quiet without closing (a frozen network path, a pooler that drops
   * notifications) or an event loop that stalled loses the lease within LEASE_MS.
   */
  get trusted(): boolean {
    return this.#listening && performance.now() - this.#heardAt < LEASE_MS;
  }

  /** Listens; resolves once this process hears itself on the channel, or logs why not. */
  async start(): Promise<void> {
    if (this.#closed) return;
    try {
      const listener = this.#connect();
      await listener.unsafe(`listen ${CHANNEL}`);
      const [row] = await listener<{ pid: string }[]>`select pg_backend_pid()::text as pid`;
      this.#pid = row!.pid;
      // Trusted only once it hears itself: behind a pooler in transaction mode LISTEN succeeds
      // and yet nothing is delivered to it.
      const heard = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
        this.#heardProbe = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      await this.#sayProbe();
      const ok = await heard;
      this.#heardProbe = null;
      if (!ok) throw new Error(`LISTEN ${CHANNEL} succeeded but its own notification never arrived`);
      // Whatever changed before LISTEN took effect was never notified: start from nothing.
      this.#changed();
      this.#listening = true;
      this.#probe ??= setInterval(() => this.#tick(), PROBE_MS);
      this.#probe.unref();
    } catch (err) {
      this.#logger.warn(
        { err: { name: (err as Error).name, message: (err as Error).message } },
        'access cache: cannot listen for changes; access decisions are read on every request',
      );
      this.#lost();
    }
  }

  /**
   * Resolves once every listening process has handled every notification committed before this
   * call: it notifies a barrier and waits for this process to receive it and for every other
   * listener PostgreSQL knows of (pg_stat_activity, read in the same statement) to acknowledge.
   * Commit order (NOTIFY docs) means each has then handled the change before it. One that does
   * not answer within BARRIER_TIMEOUT_MS has lost its lease by then (LEASE_MS is shorter): it no
   * longer uses its memory, so returning is safe; it is logged.
   */
  async barrier(sql: Tx): Promise<void> {
    const id = randomUUID();
    let settle!: (complete: boolean) => void;
    const finished = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    const timer = setTimeout(() => settle(false), BARRIER_TIMEOUT_MS);
    const pending: PendingBarrier = {
      // A listening process waits for its own word even while its lease has lapsed: a late probe
      // sent before the change could restore the lease before the change itself arrives. One
      // not listening empties its cache when it starts (after this barrier began).
      needOwn: this.#listening,
      heardOwn: false,
      waitingFor: null,
      acked: new Set(),
      done: () => {
        clearTimeout(timer);
        settle(true);
      },
    };
    this.#barriers.set(id, pending);
    try {
      let row: { listeners: string[] } | undefined;
      try {
        [row] = await sql<{ listeners: string[] }[]>`
          select pg_notify(${CHANNEL}, ${`barrier:${this.#pid ?? '0'}:${id}`}),
            array(select pid::text from pg_stat_activity
                  where application_name = ${LISTENER_NAME} and datname = current_database()) as listeners`;
      } catch (err) {
        // Waiting out the timeout still settles every listener: one trusted after it has heard a
        // probe sent after this barrier began, so everything committed before it.
        await finished;
        throw err;
      }
      pending.waitingFor = new Set(row!.listeners.filter((pid) => pid !== this.#pid));
      this.#check(id);
      if (await finished) return;
      if (pending.needOwn && !pending.heardOwn) {
        this.#logger.warn('access cache: a barrier of this process never reached it; listening again');
        this.#lost();
      }
      const silent = [...(pending.waitingFor ?? [])].filter((pid) => !pending.acked.has(pid));
      if (silent.length > 0)
        this.#logger.warn(
          { processes: silent.length },
          'access cache: listeners did not acknowledge a barrier in time (their lease has run out)',
        );
    } finally {
      clearTimeout(timer);
      this.#barriers.delete(id);
    }
  }

  async close(): Promise<void> {
    if (this.#listening) await this.#say('bye');
    this.#closed = true;
    this.#listening = false;
    if (this.#probe) clearInterval(this.#probe);
    if (this.#relisten) clearTimeout(this.#relisten);
    await this.#listener?.end({ timeout: 1 });
  }

  #connect(): postgres.Sql {
    if (this.#listener) return this.#listener;
    // `onnotify` is postgres.js's hook for notifications on connections of our own (its typings omit it).
    let self: postgres.Sql | null = null;
    const options = {
      max: 1,
      // Never closed for idleness or age (0 turns both timers off).
      idle_timeout: 0,
      max_lifetime: 0,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: LISTENER_NAME },
      onnotify: (channel: string, payload: string) => {
        if (channel === CHANNEL) this.#notified(payload);
      },
      // Only the current connection's end matters: an old one closes after it was replaced.
      onclose: () => {
        if (self !== null && this.#listener === self) this.#lost();
      },
    };
    self = postgres(this.#url, options as postgres.Options<Record<string, never>>);
    this.#listener = self;
    return self;
  }

  #notified(payload: string): void {
    if (payload === '') {
      this.#changed();
      return;
    }
    const [kind, a = '', b = ''] = payload.split(':');
    if (kind === 'probe') {
      const sentAt = /^\d+$/.test(a) ? this.#probesSent.get(Number(a)) : undefined;
      if (b === this.#pid && sentAt !== undefined) {
        this.#heardAt = Math.max(this.#heardAt, sentAt);
        for (const n of this.#probesSent.keys()) if (n <= Number(a)) this.#probesSent.delete(n);
        this.#heardProbe?.();
      }
    } else if (kind === 'barrier') {
      if (a === this.#pid) {
        const own = this.#barriers.get(b);
        if (own) own.heardOwn = true;
        this.#check(b);
      } else {
        // Every notification committed before that barrier has been handled by now.
        void this.#say(`ack:${b}`);
      }
    } else if (kind === 'ack') {
      this.#barriers.get(a)?.acked.add(b);
      this.#check(a);
    } else if (kind === 'bye') {
      // A listener that stopped owes no acknowledgement.
      for (const [id, pending] of this.#barriers) {
        pending.acked.add(a);
        this.#check(id);
      }
    } else {
      // Anything else on the channel is taken as a change: emptying is always safe.
      this.#changed();
    }
  }

  #check(id: string): void {
    const p = this.#barriers.get(id);
    if (!p?.waitingFor || (p.needOwn && !p.heardOwn)) return;
    for (const pid of p.waitingFor) if (!p.acked.has(pid)) return;
    p.done();
  }

  #tick(): void {
    if (!this.#listening) return;
    if (performance.now() - this.#heardAt > DEAF_MS) {
      this.#logger.warn(
        'access cache: the listener has heard none of its probes of the last 5 s; reconnecting',
      );
      this.#lost();
      return;
    }
    void this.#sayProbe();
  }

  /** Probes itself, noting when; probes never heard are forgotten once they could not matter. */
  async #sayProbe(): Promise<void> {
    const now = performance.now();
    for (const [n, at] of this.#probesSent) if (now - at > DEAF_MS) this.#probesSent.delete(n);
    const n = ++this.#probes;
    this.#probesSent.set(n, now);
    await this.#say(`probe:${n}`);
  }

  /** Sends on the channel from the listening connection; the server writes its own pid. */
  async #say(kind: `probe:${number}` | 'bye' | `ack:${string}`): Promise<void> {
    const listener = this.#listener;
    if (!listener) return;
    await listener`select pg_notify(${CHANNEL}, ${`${kind}:`} || pg_backend_pid())`.catch(() => {});
  }

  /** Stops trusting memory, drops the connection, and listens again shortly. */
  #lost(): void {
    this.#listening = false;
    this.#heardAt = Number.NEGATIVE_INFINITY;
    this.#probesSent.clear();
    this.#changed();
    if (this.#closed) return;
    const old = this.#listener;
    this.#listener = null;
    this.#pid = null;
    if (old) void old.end({ timeout: 0 }).catch(() => {});
    if (this.#relisten) return;
    this.#relisten = setTimeout(() => {
      this.#relisten = null;
      void this.start();
    }, RELISTEN_MS);
    this.#relisten.unref();
  }
}
