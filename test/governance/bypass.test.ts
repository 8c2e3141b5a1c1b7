import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditJson, json, type Person, type SubmitJson, startWorld, type World } from './world.ts';

let w: World;
let admin: Person;
let member: Person;
let allowing: { id: string };
let strict: { id: string };

beforeAll(async () => {
  w = await startWorld();
  admin = await w.person('admin', 'admin');
  member = await w.person('member', 'member');
  allowing = await w.database('postgres', { review_bypass_allowed: true }, 2);
  strict = await w.database('postgres', { review_bypass_allowed: false }, 2);
});
afterAll(async () => w?.stop());

const base = '/api/v1/desk/query-requests';
const ack = { acknowledge_override: true, reason: 'incident 7: stuck order' };
function submit(who: Person, databaseId: string, extra: Record<string, unknown> = {}) {
  return w.as(who, 'POST', base, {
    database_id: databaseId,
    statement: `select count(*)::int from ${w.table}`,
    ...extra,
  });
}
async function audit(query: string): Promise<AuditJson[]> {
  return (await json<{ data: AuditJson[] }>(await w.as('key', 'GET', `/api/v1/audit?${query}`))).data;
}

describe('review bypass (SPEC.md 2.2 review_bypass_allowed)', () => {
  it('runs a super admin’s own query with an explicit acknowledgment, stored on the request and flagged in the audit', async () => {
    const res = await submit(w.root, allowing.id, { bypass_review: ack });
    expect(res.status).toBe(200);
    const body = await json<SubmitJson>(res);
    expect(body.result?.rows).toEqual([[3]]);
    expect(body.request).toMatchObject({
      status: 'executed',
      bypass: { bypassed: true, reason: ack.reason },
      approvals: { count: 0 },
    });
    const [entry] = await audit(`bypassed=true&request_id=${body.request!.id}`);
    expect(entry).toMatchObject({
      outcome: 'allowed',
      actor: { kind: 'user', user_id: w.root.id },
      review: { bypassed: true, bypass_reason: ack.reason, approved_by: [] },
    });
  });

  it('is refused without the acknowledgment, and the refusal is audited', async () => {
    const res = await submit(w.root, allowing.id, { bypass_review: { reason: 'forgot to acknowledge' } });
    expect(res.status).toBe(403);
    expect((await json<{ detail: string }>(res)).detail).toContain('acknowledge');
    const [entry] = await audit(`outcome=denied&actor=${w.root.id}`);
    expect(entry).toMatchObject({ outcome: 'denied', review: { bypassed: false } });
    expect(entry?.detail).toContain('acknowledge');
    expect((await audit('bypassed=true')).every((e) => e.outcome === 'allowed')).toBe(true);
  });

  it('is refused on a database that does not allow it', async () => {
    const res = await submit(w.root, strict.id, { bypass_review: ack });
    expect(res.status).toBe(403);
    expect((await json<{ detail: string }>(res)).detail).toContain('does not allow review bypass');
  });

  it('is for super admins only, in person', async () => {
    expect((await submit(admin, allowing.id, { bypass_review: ack })).status).toBe(403);
    expect((await submit(member, allowing.id, { bypass_review: ack })).status).toBe(403);
    const viaKey = await w.as(
      'key',
      'POST',
      base,
      { database_id: allowing.id, statement: 'select 1', bypass_review: ack },
      { 'x-act-as-user': w.root.id },
    );
    expect(viaKey.status).toBe(403);
  });

  it('lets a super admin run their own pending request that lacks approvals', async () => {
    const pending = await json<SubmitJson>(await submit(w.root, allowing.id));
    expect(pending.status).toBe('pending_review');
    const id = pending.request!.id;
    expect(
      (await w.as(w.root, 'POST', `${base}/${id}/run`, { bypass_review: { acknowledge_override: false } }))
        .status,
    ).toBe(403);
    const ran = await w.as(w.root, 'POST', `${base}/${id}/run`, { bypass_review: ack });
    expect(ran.status).toBe(200);
    expect((await json<SubmitJson>(ran)).request).toMatchObject({
      status: 'executed',
      bypass: { bypassed: true },
    });
  });

  it('never on someone else’s request', async () => {
    const pending = await json<SubmitJson>(await submit(member, allowing.id));
    const id = pending.request!.id;
    const res = await w.as(w.root, 'POST', `${base}/${id}/run`, { bypass_review: ack });
    expect(res.status).toBe(403);
    expect((await w.as(member, 'GET', `${base}/${id}`)).status).toBe(200);
    expect((await json<{ status: string }>(await w.as(member, 'GET', `${base}/${id}`))).status).toBe(
      'pending',
    );
  });
});
