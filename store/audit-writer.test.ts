// The group-commit queue against a stand-in pool whose calls complete when the test says so:
// when batches go, what they hold, and who is told what.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_BODY_COLUMNS } from './audit.ts';
import { type Appended, appendGrouped, MAX_BATCH } from './audit-writer.ts';
import type { Sql } from './db.ts';

interface Call {
  orgId: string;
  ids: string[];
  finish(): void;
}

/** A fake root pool: each audit_append call waits for `finish()`; it refuses any batch holding 'bad'. */
function fakePool() {
  const calls: Call[] = [];
  // A batch of one binds its body; a larger batch binds the array of bodies.
  const sql = (_strings: TemplateStringsArray, orgId: string, body: string | string[]) =>
    new Promise<Appended[]>((resolve, reject) => {
      const ids = [body].flat().map((b) => (JSON.parse(b) as { id: string }).id);
      calls.push({
        orgId,
        ids,
        finish: () =>
          ids.includes('bad')
            ? reject(new Error('refused'))
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
    expect(calls.map((c) => c.ids)).toEqual([['e1'], ['e2', 'bad', 'e4'], ['e2'], ['bad'], ['e4']]);
    expect((await settled).map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  });
});

describe('the append insert', () => {
  it('stores exactly the columns of the one list the hash chain follows (store/audit.ts)', () => {
    const source = readFileSync(new URL('./audit-writer.ts', import.meta.url), 'utf8');
    const list = /insert into audit_log \(([^)]*)\)/.exec(source)?.[1];
    expect(list).toBeDefined();
    const columns = (list as string).split(',').map((c) => c.trim());
    const chain = new Set(['seq', 'event', 'subject', 'prev_hash', 'hash']);
    expect(columns.filter((c) => !chain.has(c))).toEqual([...AUDIT_BODY_COLUMNS]);
    expect(columns.filter((c) => chain.has(c)).sort()).toEqual([...chain].sort());
  });
});
