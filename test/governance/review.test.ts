import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUserDisabled } from '../../store/users.ts';
import { type ChatPeer, startChatPeer } from '../peers/chat.ts';
import {
  type AuditJson,
  eventually,
  json,
  type Person,
  type RequestJson,
  type SubmitJson,
  startWorld,
  type World,
} from './world.ts';

let w: World;
let peer: ChatPeer;
let author: Person;
let reviewer: Person;
let second: Person;
let db: { id: string };

beforeAll(async () => {
  peer = await startChatPeer();
  // The peer's root: it reads the method name from the path (`/chat.postMessage`).
  w = await startWorld({ env: { CHAT_API_URL: `${new URL(peer.url).origin}/`, CHAT_BOT_TOKEN: peer.token } });
  author = await w.person('member', 'author');
  reviewer = await w.person('member', 'reviewer');
  second = await w.person('admin', 'second');
  db = await w.database('postgres', { restrict_access: true, slack_channel: '#db-changes' }, 1);
  for (const p of [author, reviewer, second]) {
    expect(
      (await w.as('key', 'POST', `/api/v1/desk/databases/${db.id}/grants`, { user_id: p.id })).status,
    ).toBe(201);
  }
});
afterAll(async () => {
  await w?.stop();
  await peer?.close();
});

const base = '/api/v1/desk/query-requests';
async function submit(who: Person, statement: string, extra: Record<string, unknown> = {}) {
  const res = await w.as(who, 'POST', base, { database_id: db.id, statement, ...extra });
  return { status: res.status, body: await json<SubmitJson>(res) };
}
const act = (who: Person, id: string, verb: string, body: unknown = {}) =>
  w.as(who, 'POST', `${base}/${id}/${verb}`, body);
async function request(id: string): Promise<RequestJson> {
  return json<RequestJson>(await w.as(author, 'GET', `${base}/${id}`));
}
async function auditOf(requestId: string): Promise<AuditJson[]> {
  return (
    await json<{ data: AuditJson[] }>(await w.as('key', 'GET', `/api/v1/audit?request_id=${requestId}`))
  ).data;
}

describe('query requests: the review gate', () => {
  it('turns a query on a credential with reviews_required into a pending request and notifies the channel', async () => {
    const { status, body } = await submit(author, `select name from ${w.table} where id = $1`, {
      params: [2],
    });
    expect(status).toBe(202);
    expect(body.status).toBe('pending_review');
    expect(body.request).toMatchObject({
      status: 'pending',
      classification: 'read',
      revision: 1,
      approvals: { count: 0 },
    });
    expect(body.result).toBeNull();
    const id = body.request!.id;
    expect(id).toMatch(/^qr_[0-9A-Z]{26}$/);
    // The chat peer (Slack Web API) got the notification in #db-changes, naming the request.
    const message = await eventually(() => peer.messages.find((m) => m.text.includes(id))).catch((e) => {
      console.log(w.svc.logs.filter((l) => l.includes('notif')).join(''));
      throw e;
    });
    expect(message.channel).toBe('C0000000003');
    expect(message.text).toContain(author.email);
    expect(message.text).toContain('needs 1 approval');
    const [entry] = await auditOf(id);
    expect(entry).toMatchObject({
      outcome: 'pending',
      actor: { kind: 'user', user_id: author.id },
      params: [2],
    });
  });

  it('refuses self-approval, counts another reviewer, and runs for the author once approved', async () => {
    const { body } = await submit(author, `select name from ${w.table} where id = $1`, { params: [1] });
    const id = body.request!.id;
    const self = await act(author, id, 'approve');
    expect(self.status).toBe(403);
    // Not approved yet: running is refused (and audited as denied).
    expect((await act(author, id, 'run')).status).toBe(403);

    const approved = await act(reviewer, id, 'approve', { comment: 'looks fine' });
    expect(approved.status).toBe(200);
    expect(await json(approved)).toMatchObject({
      status: 'approved',
      approvals: { count: 1, valid: [reviewer.id] },
    });
    // Approving twice is a conflict, not a second vote.
    expect((await act(reviewer, id, 'approve')).status).toBe(409);
    // Only the author runs it.
    expect((await act(reviewer, id, 'run')).status).toBe(403);

    const ran = await act(author, id, 'run');
    expect(ran.status).toBe(200);
    const out = await json<SubmitJson>(ran);
    expect(out.result?.rows).toEqual([['a']]);
    expect(out.request).toMatchObject({ status: 'executed', result: { num_rows: 1 } });
    // Runs once.
    expect((await act(author, id, 'run')).status).toBe(409);
    const outcomes = (await auditOf(id)).map((e) => e.outcome);
    expect(outcomes.sort()).toEqual(['allowed', 'denied', 'pending']);
    const allowed = (await auditOf(id)).find((e) => e.outcome === 'allowed')!;
    expect(allowed.review.approved_by).toEqual([reviewer.id]);
    expect(allowed.rows_returned).toBe(1);
  });

  it('voids approvals when the SQL is edited', async () => {
    const { body } = await submit(author, `select id from ${w.table}`);
    const id = body.request!.id;
    await act(reviewer, id, 'approve');
    expect((await request(id)).status).toBe('approved');
    const edited = await w.as(author, 'PATCH', `${base}/${id}`, {
      statement: `select id, name from ${w.table}`,
    });
    expect(edited.status).toBe(200);
    expect(await json(edited)).toMatchObject({ status: 'pending', revision: 2, approvals: { count: 0 } });
    expect((await act(author, id, 'run')).status).toBe(403);
    // Only the author edits.
    expect((await w.as(reviewer, 'PATCH', `${base}/${id}`, { statement: 'select 1' })).status).toBe(403);
    await act(second, id, 'approve');
    const r = await request(id);
    expect(r.approvals.valid).toEqual([second.id]);
    expect(r.reviews.map((x) => [x.user_id, x.current])).toEqual([
      [reviewer.id, false],
      [second.id, true],
    ]);
    expect((await act(author, id, 'run')).status).toBe(200);
  });

  it('rejection ends the review; comments are kept', async () => {
    const { body } = await submit(author, `delete from ${w.table} where id = 3`);
    const id = body.request!.id;
    expect(body.request!.classification).toBe('write');
    expect((await act(author, id, 'comments', { comment: 'cleanup of row 3' })).status).toBe(200);
    const rejected = await act(reviewer, id, 'reject', { comment: 'not today' });
    expect(await json(rejected)).toMatchObject({ status: 'rejected' });
    expect((await act(second, id, 'approve')).status).toBe(409);
    expect((await act(author, id, 'run')).status).toBe(409);
    expect((await request(id)).reviews.map((x) => x.verdict)).toEqual(['comment', 'reject']);
  });

  it('the author can cancel; a canceled request neither runs nor takes reviews', async () => {
    const { body } = await submit(author, `select 1`);
    const id = body.request!.id;
    expect((await act(reviewer, id, 'cancel')).status).toBe(403);
    expect(await json(await act(author, id, 'cancel'))).toMatchObject({ status: 'canceled' });
    expect((await act(reviewer, id, 'approve')).status).toBe(409);
    expect((await act(author, id, 'run')).status).toBe(409);
  });

  it('runs on approval when the author asked for it', async () => {
    const { body } = await submit(author, `update ${w.table} set name = 'B' where id = 2`, {
      run_on_approval: true,
    });
    const id = body.request!.id;
    const approved = await json<RequestJson & { run: { status: string; rows: number } }>(
      await act(reviewer, id, 'approve'),
    );
    expect(approved.run).toEqual({ status: 'executed', rows: 1 });
    expect(approved.status).toBe('executed');
    expect(approved.result?.command).toBe('UPDATE');
    const check = await submit(w.root, `select name from ${w.table} where id = 2`, {
      bypass_review: { acknowledge_override: true },
    });
    // (root bypass is refused here: this database does not allow it)
    expect(check.status).toBe(403);
    const entries = await auditOf(id);
    expect(entries.find((e) => e.outcome === 'allowed')?.actor.user_id).toBe(author.id);
  });

  it('does not run on approval for an author who was disabled meanwhile', async () => {
    const leaver = await w.person('member', 'leaver');
    await w.as('key', 'POST', `/api/v1/desk/databases/${db.id}/grants`, { user_id: leaver.id });
    const { body } = await submit(leaver, 'select 1', { run_on_approval: true });
    const id = body.request!.id;
    await setUserDisabled(w.svc.deps.sql, leaver.id, true);
    const approved = await json<RequestJson & { run: { status: string; detail: string } }>(
      await act(reviewer, id, 'approve'),
    );
    expect(approved.run).toEqual({ status: 'denied', detail: 'the author is no longer an active user' });
    expect(approved.status).toBe('approved');
    expect((await auditOf(id)).map((e) => e.outcome).sort()).toEqual(['denied', 'pending']);
  });

  it('checks again at run time: an approver who lost access no longer counts', async () => {
    const { body } = await submit(author, `select id from ${w.table} where id = 1`);
    const id = body.request!.id;
    await act(reviewer, id, 'approve');
    expect((await request(id)).status).toBe('approved');
    await w.as('key', 'DELETE', `/api/v1/desk/databases/${db.id}/grants/${reviewer.id}`);
    const refused = await act(author, id, 'run');
    expect(refused.status).toBe(403);
    expect((await json<{ detail: string }>(refused)).detail).toContain('0 count now');
    expect((await request(id)).status).toBe('pending');
    // The reviewer cannot even see it any more.
    expect((await w.as(reviewer, 'GET', `${base}/${id}`)).status).toBe(404);
    await w.as('key', 'POST', `/api/v1/desk/databases/${db.id}/grants`, { user_id: reviewer.id });
  });

  it('checks again at run time: an author who lost access gets a 404', async () => {
    const { body } = await submit(author, `select id from ${w.table} where id = 1`);
    const id = body.request!.id;
    await act(reviewer, id, 'approve');
    await w.as('key', 'DELETE', `/api/v1/desk/databases/${db.id}/grants/${author.id}`);
    expect((await act(author, id, 'run')).status).toBe(404);
    const denied = (await auditOf(id)).find((e) => e.outcome === 'denied');
    expect(denied?.detail).toBe('no such database');
    await w.as('key', 'POST', `/api/v1/desk/databases/${db.id}/grants`, { user_id: author.id });
  });

  it('lets a marked API key act for a user with x-act-as-user, audits both, and never review as them', async () => {
    const res = await w.as(
      'key',
      'POST',
      base,
      { database_id: db.id, statement: 'select 2' },
      { 'x-act-as-user': author.email },
    );
    expect(res.status).toBe(202);
    const id = (await json<SubmitJson>(res)).request!.id;
    const approve = await w.as('key', 'POST', `${base}/${id}/approve`, {}, { 'x-act-as-user': reviewer.id });
    expect(approve.status).toBe(403);
    const pending = await json<RequestJson>(await w.as(reviewer, 'GET', `${base}/${id}`));
    expect(pending).toMatchObject({ status: 'pending', reviews: [] });
    const [entry] = await auditOf(id);
    expect(entry?.actor).toMatchObject({
      kind: 'user',
      user_id: author.id,
      api_key_id: expect.stringMatching(/^key_/),
    });
    const nobody = await w.as(
      'key',
      'POST',
      base,
      { database_id: db.id, statement: 'select 2' },
      { 'x-act-as-user': 'nobody@x.test' },
    );
    expect(nobody.status).toBe(422);
    // Without the header, the key is its owner (the super admin) and authors as them.
    const own = await w.as('key', 'POST', base, { database_id: db.id, statement: 'select 2' });
    expect(own.status).toBe(202);
    expect((await json<SubmitJson>(own)).request).toMatchObject({ author: { user_id: w.root.id } });
  });
});
