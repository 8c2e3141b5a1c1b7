// Comments reach both sides, a rejected request stays in front of
// its author with the reason, an edit shows its diff and the approvals it voided, and every
// request says whether it reads or writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { json, startWorld, type World } from '../governance/world.ts';
import { signIn } from '../helpers/service.ts';

let w: World;
let db: { id: string };
const people: Record<string, { id: string; cookie: string; csrf: string }> = {};

beforeAll(async () => {
  w = await startWorld();
  db = await w.database('postgres', {}, 1);
  for (const name of ['author', 'reviewer', 'second']) {
    const email = `${name}@reviews.example.test`;
    const user = await createUser(w.svc.deps.sql, {
      orgId: w.orgId,
      email,
      role: 'member',
      password: 'review password 1',
    });
    people[name] = { id: user.id, ...(await signIn(w.svc, email, 'review password 1')) };
  }
});
afterAll(async () => w?.stop());

const post = (who: string, path: string, fields: Record<string, string>) =>
  w.svc.fetch(path, {
    method: 'POST',
    headers: { cookie: people[who]!.cookie },
    body: new URLSearchParams({ _csrf: people[who]!.csrf, ...fields }),
    redirect: 'manual',
  });
const reviews = async (who: string) =>
  (await w.svc.fetch('/reviews', { headers: { cookie: people[who]!.cookie } })).text();

async function submit(statement: string): Promise<string> {
  const res = await w.svc.fetch('/api/v1/desk/query-requests', {
    method: 'POST',
    headers: {
      cookie: people.author!.cookie,
      'x-csrf-token': people.author!.csrf,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ database_id: db.id, statement }),
  });
  return (await json<{ request: { id: string } }>(res)).request.id;
}

/** The card of one request on the page. */
const card = (html: string, id: string) =>
  html.slice(html.indexOf(`id="${id}"`), html.indexOf('</article>', html.indexOf(`id="${id}"`)));

describe('the review page', () => {
  it('shows the class, carries comments both ways, and keeps a rejection with its reason in front of the author', async () => {
    const id = await submit(`delete from ${w.table} where id = 3`);
    expect(card(await reviews('reviewer'), id)).toContain('writes');
    await post('reviewer', `/reviews/${id}/review`, {
      verdict: 'comment',
      comment: 'Which ticket is this for?',
    });
    expect(card(await reviews('author'), id)).toContain('Which ticket is this for?');
    await post('author', `/reviews/${id}/review`, {
      verdict: 'comment',
      comment: 'SUP-42, the customer asked.',
    });
    expect(card(await reviews('reviewer'), id)).toContain('SUP-42, the customer asked.');
    await post('reviewer', `/reviews/${id}/review`, {
      verdict: 'reject',
      comment: 'Use the archive job instead.',
    });
    const mine = card(await reviews('author'), id);
    expect(mine).toContain('rejected');
    expect(mine).toContain('Use the archive job instead.');
  });

  it('an edit shows what changed and which approvals it voided', async () => {
    const id = await submit(`select id from ${w.table}`);
    expect(card(await reviews('reviewer'), id)).toContain('reads');
    await post('reviewer', `/reviews/${id}/review`, { verdict: 'approve', comment: 'fine' });
    const edited = await post('author', `/reviews/${id}/edit`, {
      statement: `select id, name from ${w.table}`,
    });
    expect(decodeURIComponent(edited.headers.get('location')!)).toContain('Saved revision 2');
    const html = card(await reviews('second'), id);
    expect(html).toContain(`- select id from ${w.table}`);
    expect(html).toContain(`+ select id, name from ${w.table}`);
    expect(html).toContain('voided 1 approval(s)');
    expect(html).toContain('reviewer@reviews.example.test');
  });
});

describe("an executed request's page", () => {
  it('offers no Cancel, and a cancel posted anyway says plainly why not', async () => {
    const id = await submit(`select id from ${w.table} where id = 1`);
    const open = await w.svc.fetch(`/reviews/${id}`, { headers: { cookie: people.author!.cookie } });
    expect(await open.text()).toContain(`action="/reviews/${id}/cancel"`);
    await post('reviewer', `/reviews/${id}/review`, { verdict: 'approve', comment: 'fine' });
    expect((await post('author', `/reviews/${id}/run`, {})).status).toBe(200);
    const ran = await w.svc.fetch(`/reviews/${id}`, { headers: { cookie: people.author!.cookie } });
    const html = await ran.text();
    expect(html).toContain('executed');
    expect(html).not.toContain(`action="/reviews/${id}/cancel"`);
    const canceled = await post('author', `/reviews/${id}/cancel`, {});
    const where = decodeURIComponent(canceled.headers.get('location') ?? '');
    expect(where).toContain('an executed query request cannot be canceled');
  });
});

describe('the review inbox over REST', () => {
  it("GET /api/v1/desk/query-requests/inbox lists what the page lists: others' pending requests, one's own open ones", async () => {
    const id = await submit(`select id from ${w.table} where id = 2`);
    const inbox = async (who: string) =>
      json<{ waiting: { id: string }[]; mine: { id: string; status: string }[] }>(
        await w.svc.fetch('/api/v1/desk/query-requests/inbox', { headers: { cookie: people[who]!.cookie } }),
      );
    const reviewer = await inbox('reviewer');
    expect(reviewer.waiting.map((r) => r.id)).toContain(id);
    expect(reviewer.mine.map((r) => r.id)).not.toContain(id);
    expect(card(await reviews('reviewer'), id)).toContain('select id');
    const author = await inbox('author');
    // One's own request never waits on oneself.
    expect(author.waiting.map((r) => r.id)).not.toContain(id);
    expect(author.mine.find((r) => r.id === id)?.status).toBe('pending');
  });
});
