import { describe, expect, it } from 'vitest';
import { AdapterError } from './errors.ts';
import { Lender } from './lender.ts';

function counter(max: number) {
  let made = 0;
  const destroyed: number[] = [];
  const lender = new Lender(
    () => ++made,
    async (n) => {
      destroyed.push(n);
    },
    max,
  );
  return { lender, destroyed, made: () => made };
}

describe('Lender', () => {
  it('makes items on demand up to max and reuses released ones', async () => {
    const { lender, made } = counter(2);
    const a = await lender.acquire(100);
    const b = await lender.acquire(100);
    expect([a, b]).toEqual([1, 2]);
    lender.release(a);
    expect(await lender.acquire(100)).toBe(1);
    expect(made()).toBe(2);
  });

  it('hands a released item to the longest waiter', async () => {
    const { lender } = counter(1);
    const a = await lender.acquire(100);
    const first = lender.acquire(1000);
    const second = lender.acquire(1000);
    lender.release(a);
    expect(await first).toBe(1);
    lender.release(1);
    expect(await second).toBe(1);
  });

  it('fails a waiter after its time limit with a timeout error', async () => {
    const { lender } = counter(1);
    await lender.acquire(100);
    const err = await lender.acquire(20).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdapterError);
    expect((err as AdapterError).kind).toBe('timeout');
  });

  it('discard destroys the item and gives a waiter a fresh one', async () => {
    const { lender, destroyed } = counter(1);
    const a = await lender.acquire(100);
    const waiting = lender.acquire(1000);
    lender.discard(a);
    expect(await waiting).toBe(2);
    expect(destroyed).toEqual([1]);
    expect(lender.size).toBe(1);
  });

  it('close destroys lent and idle items and fails waiters', async () => {
    const { lender, destroyed } = counter(2);
    const a = await lender.acquire(100);
    await lender.acquire(100);
    lender.release(a); // 1 idle, 2 lent
    await lender.acquire(100); // 1 lent again
    const waiting = lender.acquire(1000).catch((e: unknown) => e);
    await lender.close();
    expect(destroyed.sort()).toEqual([1, 2]);
    expect(await waiting).toBeInstanceOf(AdapterError);
    await expect(lender.acquire(10)).rejects.toThrow(/closed/);
  });
});
