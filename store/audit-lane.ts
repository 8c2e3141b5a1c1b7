// The store pool's connection for audit batches (store/audit-writer.ts). It is an
// optimization only, so it is used only while known to work: opened and asked `select 1` before
// the first batch, given up after any failure or stall (its client ended at once, so no statement
// or reconnect loop of postgres.js outlives it), and asked again after a pause. Meanwhile, and
// whenever a batch is already on it, batches go over the pool as before.

/** What the lane needs of a postgres.js client. */
export interface LaneClient {
  end(options?: { timeout?: number | undefined }): Promise<void>;
}

type State = 'closed' | 'probing' | 'up' | 'down';

/** How long the probe may take, and how long a batch on the lane may take before it is given up. */
export const LANE_STALL_MS = 10_000;
/** After a failure, how long batches go over the pool before the lane is probed again. */
export const LANE_PAUSE_MS = 5_000;

export class AuditLane<C extends LaneClient> {
  #client: C | null = null;
  #state: State = 'closed';
  #busy = false;
  #ended = false;
  #retryAt = 0;

  constructor(
    private readonly open: () => C,
    private readonly probe: (client: C) => Promise<unknown>,
  ) {}

  /**
   * The lane's client for one batch, or null: busy, not known to work yet, or failed recently
   * (a probe starts then when due). A caller that gets the client must call `done` once.
   */
  take(): C | null {
    if (this.#ended || this.#busy) return null;
    if (this.#state === 'up' && this.#client) {
      this.#busy = true;
      return this.#client;
    }
    if (this.#state === 'closed' || (this.#state === 'down' && Date.now() >= this.#retryAt))
      this.#startProbe();
    return null;
  }

  /** The batch taken with `take` is over: `ok` false gives the lane up until it answers again. */
  done(ok: boolean): void {
    this.#busy = false;
    if (!ok) this.#fail();
  }

  /** Whether batches go over the lane now (for tests and metrics). */
  get up(): boolean {
    return this.#state === 'up';
  }

  end(options?: { timeout?: number | undefined }): Promise<void> {
    this.#ended = true;
    const client = this.#client;
    this.#client = null;
    return client ? client.end(options) : Promise.resolve();
  }

  #startProbe(): void {
    const client = this.open();
    this.#client = client;
    this.#state = 'probing';
    void withStall(this.probe(client)).then(
      () => {
        if (this.#client === client && !this.#ended) this.#state = 'up';
      },
      () => {
        if (this.#client === client) this.#fail();
      },
    );
  }

  #fail(): void {
    const client = this.#client;
    this.#client = null;
    this.#state = 'down';
    this.#retryAt = Date.now() + LANE_PAUSE_MS;
    // timeout 0: whatever the old client still runs or retries is cut now.
    void client?.end({ timeout: 0 }).catch(() => {});
  }
}

/** `p`, or a rejection once LANE_STALL_MS have passed without it settling. */
export function withStall<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the audit connection stalled')), LANE_STALL_MS);
    timer.unref();
  });
  return Promise.race([p, stalled]).finally(() => clearTimeout(timer));
}
