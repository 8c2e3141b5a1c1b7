// The group-commit queue against a stand-in pool whose calls complete when the test says so:
// when batches go, what they hold, and who is told what.
import { describe, expect, it } from 'vitest';
import { entryHash } from '../audit/chain.ts';
import { appendGrouped, MAX_BATCH } from './audit-writer.ts';
import type { Sql } from './db.ts';

interface Call {
  orgId: string;
  ids: string[];
  /** Built on the head the pool knew, hashed by the pool. */
  onHead: boolean;
  finish(): void;
}

/**
 * A fake root pool: each append call waits for `finish()`; it refuses any batch holding 'bad'.
 * Calls through audit_append (or its one-entry statement) answer the rows; calls that build on
 * a known head (store/audit-head.ts) answer one row per entry, or none when `moved` says the
 * head moved elsewhere meanwhile.
 */
function fakePool(options: { moved?: () => boolean } = {}) {
  const calls: Call[] = [];
  const sql = (strings: TemplateStringsArray, ...args: unknown[]) =>
    new Promise<unknown[]>((resolve, reject) => {
      const onHead = strings.join('?').includes('update audit_heads h\n      set seq = ');
      // A batch of one binds its body; a larger batch binds the array of bodies.
      const orgId = (onHead ? args[3] : args[0]) as string;
      const bodies = [
        (onHead ? args.find((x) => Array.isArray(x) && String(x[0]).startsWith('{')) : args[1]) as
          | string
          | string[],
      ].flat();
      const ids = bodies.map((b) => (JSON.parse(b) as { id: string }).id);
      calls.push({
        orgId,
        ids,
        onHead,
        finish: () =>
          ids.includes('bad')
            ? reject(new Error('refused'))
            : onHead
              ? resolve(options.moved?.() ? [] : ids.map(() => ({ '?column?': 1 })))
              : resolve(ids.map((id) => ({ id, seq: BigInt(id.slice(1)), hash: `h${id}` }))),
      });
    });
  return { pool: Object.assign(sql, { begin: () => {} }) as unknown as Sql, calls };
}

const entry = (id: string) => ({ id, body: JSON.stringify({ id }) });
const tick = () => new Promise((r) => setImmediate(r));

/** Finishes calls as they come until every promise has settled. */
async function finishAll(calls: Call[], until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  let next = 0;
  while (!done) {
    await tick();
    while (next < calls.length) calls[next++]!.finish();
  }
}

describe('audit group commit queue', () => {
  it('sends an idle organization’s entry at once, alone, with no timer', async () => {
    const { pool, calls } = fakePool();
    const p = appendGrouped(pool, 'org_a', entry('e1'));
    await Promise.resolve();
    expect(calls.map((c) => c.ids)).toEqual([['e1']]);
    calls[0]!.finish();
    expect(await p).toEqual({ id: 'e1', seq: 1n, hash: 'he1' });
  });

  it('queues arrivals while a batch is in flight and sends them next, in order, at most MAX_BATCH at a time', async () => {
    const { pool, calls } = fakePool();
    const ids = Array.from({ length: 100 }, (_, i) => `e${i + 1}`);
    const all = Promise.all(ids.map((id) => appendGrouped(pool, 'org_a', entry(id))));
    await finishAll(calls, all);
    expect(calls.map((c) => c.ids.length)).toEqual([1, MAX_BATCH, 100 - 1 - MAX_BATCH]);
    expect(calls.flatMap((c) => c.ids)).toEqual(ids);
    expect((await all).map((r) => r.id)).toEqual(ids);
  });

  it('keeps organizations apart: each has its own batch in flight', async () => {
    const { pool, calls } = fakePool();
    const all = Promise.all([
      appendGrouped(pool, 'org_a', entry('e1')),
      appendGrouped(pool, 'org_b', entry('e2')),
      appendGrouped(pool, 'org_a', entry('e3')),
    ]);
    await Promise.resolve();
    expect(calls.map((c) => [c.orgId, c.ids])).toEqual([
      ['org_a', ['e1']],
      ['org_b', ['e2']],
    ]);
    await finishAll(calls, all);
    expect(calls.map((c) => [c.orgId, c.ids])[2]).toEqual(['org_a', ['e3']]);
    expect((await all).map((r) => r.id)).toEqual(['e1', 'e2', 'e3']);
  });

  it('retries a refused batch entry by entry, so only the bad entry’s caller fails', async () => {
    const { pool, calls } = fakePool();
    const settled = Promise.allSettled(
      ['e1', 'e2', 'bad', 'e4'].map((id) => appendGrouped(pool, 'org_a', entry(id))),
    );
    await finishAll(calls, settled);
    // Refused on the known head, the batch goes to audit_append, which refuses it too.
    expect(calls.map((c) => [c.onHead, c.ids])).toEqual([
      [false, ['e1']],
      [true, ['e2', 'bad', 'e4']],
      [false, ['e2', 'bad', 'e4']],
      [false, ['e2']],
      [false, ['bad']],
      [false, ['e4']],
    ]);
    expect((await settled).map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  });

  it('builds the next batch on the head it saw: hashed here, in one statement, with the chain’s formula', async () => {
    const { pool, calls } = fakePool();
    const first = appendGrouped(pool, 'org_a', entry('e1'));
    const all = Promise.all([first, ...['e2', 'e3'].map((id) => appendGrouped(pool, 'org_a', entry(id)))]);
    await finishAll(calls, all);
    expect(calls.map((c) => [c.onHead, c.ids])).toEqual([
      [false, ['e1']],
      [true, ['e2', 'e3']],
    ]);
    const h2 = entryHash('he1', 2n, entry('e2').body);
    expect((await all).slice(1)).toEqual([
      { id: 'e2', seq: 2n, hash: h2 },
      { id: 'e3', seq: 3n, hash: entryHash(h2, 3n, entry('e3').body) },
    ]);
  });

  it('when the chain moved elsewhere, writes nothing on the old head and leaves the chain to audit_append for a while', async () => {
    let moved = true;
    const { pool, calls } = fakePool({ moved: () => moved });
    await finishAll(calls, appendGrouped(pool, 'org_b', entry('e1')));
    const raced = appendGrouped(pool, 'org_b', entry('e2'));
    await finishAll(calls, raced);
    // The head the pool knew was gone: the same entry went again, through audit_append.
    expect(calls.map((c) => [c.onHead, c.ids])).toEqual([
      [false, ['e1']],
      [true, ['e2']],
      [false, ['e2']],
    ]);
    expect(await raced).toEqual({ id: 'e2', seq: 2n, hash: 'he2' });
    moved = false;
    await finishAll(calls, appendGrouped(pool, 'org_b', entry('e3')));
    expect(calls[3]).toMatchObject({ onHead: false, ids: ['e3'] });
  });
});
