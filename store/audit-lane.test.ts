// The audit connection's states (store/audit-lane.ts) with stand-in clients: used only once it
// has answered, by one batch at a time, given up on failure or stall and probed again later.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditLane, LANE_PAUSE_MS, LANE_STALL_MS, withStall } from './audit-lane.ts';

class Client {
  ended: Array<number | undefined> = [];
  end(options?: { timeout?: number | undefined }): Promise<void> {
    this.ended.push(options?.timeout);
    return Promise.resolve();
  }
}

/** A lane whose probes answer as `answers` says, in order ('ok', 'fail' or 'hang'). */
function lane(answers: Array<'ok' | 'fail' | 'hang'>) {
  const opened: Client[] = [];
  const l = new AuditLane(
    () => {
      const c = new Client();
      opened.push(c);
      return c;
    },
    () => {
      const a = answers.shift() ?? 'ok';
      return a === 'ok'
        ? Promise.resolve()
        : a === 'fail'
          ? Promise.reject(new Error('refused'))
          : new Promise(() => {});
    },
  );
  return { lane: l, opened };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('audit lane', () => {
  it('is not used before its probe has answered, then by one batch at a time', async () => {
    const { lane: l, opened } = lane(['ok']);
    expect(l.take()).toBeNull(); // starts the probe
    expect(opened).toHaveLength(1);
    expect(l.take()).toBeNull(); // probing: still the pool
    await vi.advanceTimersByTimeAsync(0);
    expect(l.up).toBe(true);
    const c = l.take();
    expect(c).toBe(opened[0]);
    expect(l.take()).toBeNull(); // busy
    l.done(true);
    expect(l.take()).toBe(opened[0]);
    expect(opened).toHaveLength(1);
  });

  it('a failed batch gives it up at once (its client cut), for a pause, then a new probe', async () => {
    const { lane: l, opened } = lane(['ok', 'ok']);
    l.take();
    await vi.advanceTimersByTimeAsync(0);
    expect(l.take()).toBe(opened[0]);
    l.done(false);
    expect(l.up).toBe(false);
    expect(opened[0]!.ended).toEqual([0]);
    expect(l.take()).toBeNull();
    await vi.advanceTimersByTimeAsync(LANE_PAUSE_MS - 1);
    expect(l.take()).toBeNull();
    expect(opened).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(l.take()).toBeNull(); // the new probe starts here
    expect(opened).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(l.take()).toBe(opened[1]);
  });

  it('a refused or hanging probe leaves every batch on the pool, and is tried again after a pause', async () => {
    const { lane: l, opened } = lane(['fail', 'hang', 'ok']);
    l.take();
    await vi.advanceTimersByTimeAsync(0);
    expect(l.up).toBe(false);
    expect(opened[0]!.ended).toEqual([0]);
    await vi.advanceTimersByTimeAsync(LANE_PAUSE_MS);
    l.take(); // second probe: never answers
    await vi.advanceTimersByTimeAsync(LANE_STALL_MS - 1);
    expect(l.take()).toBeNull();
    expect(opened).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(opened[1]!.ended).toEqual([0]);
    await vi.advanceTimersByTimeAsync(LANE_PAUSE_MS);
    l.take();
    await vi.advanceTimersByTimeAsync(0);
    expect(l.take()).toBe(opened[2]);
  });

  it('end() ends its client with the options given, and it is never used again', async () => {
    const { lane: l, opened } = lane(['ok']);
    l.take();
    await vi.advanceTimersByTimeAsync(0);
    await l.end({ timeout: 5 });
    expect(opened[0]!.ended).toEqual([5]);
    expect(l.take()).toBeNull();
    await vi.advanceTimersByTimeAsync(LANE_PAUSE_MS);
    expect(l.take()).toBeNull();
    expect(opened).toHaveLength(1);
    // A lane never opened has nothing to end.
    await expect(lane([]).lane.end()).resolves.toBeUndefined();
  });

  it('withStall rejects a promise that has not settled in time, and passes one that has', async () => {
    const stalled = withStall(new Promise(() => {}));
    const check = expect(stalled).rejects.toThrow('the audit connection stalled');
    await vi.advanceTimersByTimeAsync(LANE_STALL_MS);
    await check;
    await expect(withStall(Promise.resolve(7))).resolves.toBe(7);
  });
});
