// The console's history through its pages: every run adds a line, newest first, and a person's
// history keeps the HISTORY_KEPT newest lines — their own, whoever else runs queries meanwhile.
// The page lists the HISTORY_SHOWN newest until the person asks for the whole history; the page a
// run answers with lists the same lines a fresh page would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_KEPT } from '../../store/workspace.ts';
import { HISTORY_SHOWN } from '../../workspace/history.ts';
import { addPerson, signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };
let other: { cookie: string; csrf: string };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
  await addPerson(svc, { email: 'history-other@example.test', password: 'history-other-password' });
  other = await signIn(svc, 'history-other@example.test', 'history-other-password');
});
afterAll(async () => svc?.stop());

type Listed = { lines: string[]; more: string | null };

/**
 * Runs `statement` from the console (posted to `path`); no such database, so it is a line with an
 * error outcome. Answers the history the page it answered with lists.
 */
async function run(
  who: { cookie: string; csrf: string },
  statement: string,
  path = '/console',
): Promise<Listed> {
  const res = await svc.fetch(path, {
    method: 'POST',
    headers: { cookie: who.cookie },
    body: new URLSearchParams({ _csrf: who.csrf, credential: 'db_missing/crd_missing', statement }),
  });
  expect(res.status).toBe(200);
  return listedOn(await res.text());
}

/** The statements of a console page's history list, top to bottom, and its link to the rest. */
function listedOn(page: string): Listed {
  const list = /<ul[^>]*id="history-list"[^>]*>([\s\S]*?)<\/ul>/.exec(page)?.[1] ?? '';
  const more = /<a href="([^"]*)">Show the whole history<\/a>/.exec(page)?.[1] ?? null;
  return { lines: [...list.matchAll(/<code>([^<]*)<\/code>/g)].map((m) => m[1]!), more };
}

/** The console page at `path`, as listedOn reads it. */
async function historyOn(who: { cookie: string }, path: string): Promise<Listed> {
  return listedOn(await (await svc.fetch(path, { headers: { cookie: who.cookie } })).text());
}

/** The whole history as the page lists it when asked for all of it. */
async function history(who: { cookie: string }): Promise<string[]> {
  return (await historyOn(who, '/console?all_history=1')).lines;
}

describe('console history', () => {
  it('keeps the newest lines of each person, newest first', async () => {
    await run(other, 'select 0 as other');
    const runs = HISTORY_KEPT + 3;
    for (let i = 1; i <= runs; i++) await run(admin, `select ${i} as n`);
    const lines = await history(admin);
    expect(lines).toHaveLength(HISTORY_KEPT);
    expect(lines[0]).toBe(`select ${runs} as n`);
    expect(lines.at(-1)).toBe(`select ${runs - HISTORY_KEPT + 1} as n`);
    expect(lines).not.toContain('select 3 as n');
    // Another person's line is not theirs to trim.
    expect(await history(other)).toEqual(['select 0 as other']);
    const [stored] = await svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from query_history h join users u on u.id = h.user_id
      where lower(u.email) = ${svc.admin.email}`;
    expect(stored?.n).toBe(HISTORY_KEPT);
  });

  it('lists the newest lines until asked for the whole history, searches included', async () => {
    const first = await historyOn(admin, '/console');
    expect(first.lines).toHaveLength(HISTORY_SHOWN);
    expect(first.lines).toEqual((await history(admin)).slice(0, HISTORY_SHOWN));
    expect(first.more).toBe('/console?all_history=1#history-heading');
    // A search lists its newest matches the same way; its link keeps the search.
    const search = await historyOn(admin, '/console?q=as%20n');
    expect(search.lines).toEqual(first.lines);
    expect(search.more).toBe('/console?all_history=1&amp;q=as%20n#history-heading');
    const all = await historyOn(admin, '/console?all_history=1&q=as%20n');
    expect(all.lines).toHaveLength(HISTORY_KEPT);
    expect(all.more).toBeNull();
    // A short history is listed whole, with no link.
    expect(await historyOn(other, '/console')).toEqual({ lines: ['select 0 as other'], more: null });
  });

  // The run's page is answered with the lines its own statement read as it added the line.
  it('answers a run with the list the console shows after it', async () => {
    // A full history: the new line first, the rest as a fresh page lists them.
    const full = await run(admin, 'select 500 as n');
    expect(full.lines[0]).toBe('select 500 as n');
    expect(full).toEqual(await historyOn(admin, '/console'));
    expect(full.more).not.toBeNull();
    // The whole history: the oldest line went as this one came.
    const before = await history(admin);
    const all = await run(admin, 'select 501 as n', '/console?all_history=1');
    expect(all.lines).toEqual(['select 501 as n', ...before.slice(0, HISTORY_KEPT - 1)]);
    expect(all).toEqual(await historyOn(admin, '/console?all_history=1'));
    expect(all.more).toBeNull();
    // Under a search, the new line is listed only when it matches (ILIKE, its wildcards literal).
    const missed = await run(admin, 'select 502 as m', '/console?q=as%20n');
    expect(missed.lines[0]).toBe('select 501 as n');
    expect(missed).toEqual(await historyOn(admin, '/console?q=as%20n'));
    const matched = await run(admin, 'SELECT 503 AS N', '/console?q=as%20n');
    expect(matched.lines[0]).toBe('SELECT 503 AS N');
    expect(matched).toEqual(await historyOn(admin, '/console?q=as%20n'));
    expect((await run(admin, 'select 504 as_n', '/console?q=as_n')).lines).toEqual(['select 504 as_n']);
    // The line a run pushes out of a full history is not listed, even when it is the only match.
    const whole = await history(admin);
    const oldest = whole.at(-1)!;
    expect(whole.filter((l) => l.toLowerCase().includes(oldest))).toEqual([oldest]);
    const onlyOldest = `/console?all_history=1&q=${encodeURIComponent(oldest)}`;
    expect(await historyOn(admin, onlyOldest)).toEqual({ lines: [oldest], more: null });
    expect(await run(admin, 'select 505 as n', onlyOldest)).toEqual({ lines: [], more: null });
    expect(await historyOn(admin, onlyOldest)).toEqual({ lines: [], more: null });
    // A short history: both lines, no link.
    expect(await run(other, 'select 1 as other')).toEqual({
      lines: ['select 1 as other', 'select 0 as other'],
      more: null,
    });
  });
});
