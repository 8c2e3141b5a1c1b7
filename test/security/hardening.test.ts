// Failures strangers cause never shut the real person or a shared AI client out; one
// spelling rule for sign-in limits; no text from a link on the pages; addresses per organization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { insertOrganization } from '../../store/users.ts';
import { addPerson, signIn, startTestService, type TestService } from '../helpers/service.ts';
import { connect, tokenRequest } from '../oauth/flow.ts';

let svc: TestService;
const person = { email: 'hardening-person@example.test', password: 'person password 123' };

beforeAll(async () => {
  svc = await startTestService({
    // Behind one reverse proxy: the client address is the last X-Forwarded-For entry, so a test
    // can speak from several addresses without sending a packet anywhere but loopback.
    env: { TRUSTED_PROXIES: '1', RATE_LIMIT_ACCOUNT_FAILURES: '3', RATE_LIMIT_ADDRESS_FAILURES: '50' },
    // A UTF-8 character type, as most installed servers have: lower() folds beyond ASCII.
    storeCtype: 'C.utf8',
  });
  await addPerson(svc, person);
});
afterAll(async () => svc?.stop());

const from = (address: string) => ({ 'x-forwarded-for': address });
const login = (email: string, password: string, address: string) =>
  svc.fetch('/login', {
    method: 'POST',
    headers: from(address),
    body: new URLSearchParams({ email, password, next: '/' }),
    redirect: 'manual',
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('failures from strangers lock no one out', () => {
  it('bad token requests naming a public client do not refuse its valid refreshes from elsewhere', async () => {
    const { tokens, client } = await connect(svc, person);
    const attacker = '198.51.100.7';
    for (let i = 0; i < 3; i++) {
      const res = await tokenRequest(
        svc,
        { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: client.client_id },
        from(attacker),
      );
      expect(res.status).toBe(400);
    }
    // The attacker's address is slowed...
    const again = await tokenRequest(
      svc,
      { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: client.client_id },
      from(attacker),
    );
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    // ...and the real user of the same client, elsewhere, refreshes as before.
    const valid = await tokenRequest(
      svc,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id },
      from('203.0.113.20'),
    );
    expect(valid.status).toBe(200);
    expect(((await valid.json()) as { access_token?: string }).access_token).toBeTruthy();
  });

  it('wrong passwords from one address do not lock the person out from another', async () => {
    const email = 'locked-out-not@example.test';
    const password = 'the real password 123';
    await addPerson(svc, { email, password });
    for (let i = 0; i < 3; i++) expect((await login(email, 'guess', '198.51.100.8')).status).toBe(401);
    // The attacker's address is shut out of this account for the window, right password or not.
    const attacker = await login(email, password, '198.51.100.8');
    expect(attacker.status).toBe(429);
    expect(Number(attacker.headers.get('retry-after'))).toBeGreaterThan(60);
    // The person elsewhere gets in, after at most the short backoff the account's failures ask.
    let res = await login(email, password, '203.0.113.21');
    if (res.status === 429) {
      const wait = Number(res.headers.get('retry-after'));
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(2);
      await sleep(wait * 1000 + 100);
      res = await login(email, password, '203.0.113.21');
    }
    expect(res.status).toBe(303);
  });

  it('failures spread over many addresses only space attempts out; the right password gets in after', async () => {
    const email = 'sprayed@example.test';
    const password = 'the real password 456';
    await addPerson(svc, { email, password });
    for (let i = 0; i < 3; i++)
      expect((await login(email, 'guess', `198.51.100.${20 + i}`)).status).toBe(401);
    // Past the account's threshold the next attempt, from anywhere, waits out a backoff without
    // its password being tried: a guess made now costs nothing and tells nothing.
    await login(email, 'guess', '198.51.100.30');
    const spaced = await login(email, 'guess', '198.51.100.31');
    expect(spaced.status).toBe(429);
    const wait = Number(spaced.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    await sleep(wait * 1000 + 100);
    const res = await login(email, password, '203.0.113.22');
    expect(res.status).toBe(303);
  });

  it('without a configured proxy X-Forwarded-For is not believed', async () => {
    const plain = await startTestService({ env: { RATE_LIMIT_ACCOUNT_FAILURES: '2' } });
    try {
      await addPerson(plain, { email: 'xff@example.test', password: 'xff password 1234' });
      const attempt = (address: string, password = 'guess') =>
        plain.fetch('/login', {
          method: 'POST',
          headers: from(address),
          body: new URLSearchParams({ email: 'xff@example.test', password, next: '/' }),
          redirect: 'manual',
        });
      expect((await attempt('198.51.100.40')).status).toBe(401);
      expect((await attempt('198.51.100.41')).status).toBe(401);
      // A claimed new address is the same socket peer: still shut out.
      expect((await attempt('198.51.100.42', 'xff password 1234')).status).toBe(429);
    } finally {
      await plain.stop();
    }
  });
});

describe('sign-in limits and the account lookup fold addresses alike', () => {
  it('a spelling the store folds to the same account shares its limit', async () => {
    const email = 'mi-hardening@example.test';
    const password = 'mi password 12345';
    await addPerson(svc, { email, password });
    const address = '198.51.100.50';
    for (let i = 0; i < 3; i++) expect((await login(email, 'guess', address)).status).toBe(401);
    // `İ` folds to `i` in PostgreSQL's lower() under a UTF-8 character type, so this reaches
    // the same account; it must not start a fresh count either.
    const other = 'mİ-hardening@example.test';
    expect((await login(other, 'guess', address)).status).toBe(429);
    expect((await login(other, password, address)).status).toBe(429);
  });
});

describe('an address is unique per organization', () => {
  it('inviting an address another organization uses answers as for a new address', async () => {
    const elsewhere = await insertOrganization(svc.deps.sql, { id: 'org_hardening_other', name: 'Other Co' });
    await createUser(svc.deps.sql, {
      orgId: elsewhere.id,
      email: 'Taken.Elsewhere@example.test',
      role: 'member',
      password: 'other org password 1',
    });
    const invite = (email: string) =>
      svc.fetch('/api/v1/users', {
        method: 'POST',
        headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ email, name: 'Someone', role: 'member' }),
      });
    const fresh = await invite('never-seen@example.test');
    const taken = await invite('taken.elsewhere@example.test');
    expect(taken.status).toBe(fresh.status);
    expect(taken.status).toBe(201);
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    expect(shape((await taken.json()) as Record<string, unknown>)).toEqual(
      shape((await fresh.json()) as Record<string, unknown>),
    );
    // Within one organization an address is still taken once (that the admin can see anyway).
    const again = await invite('NEVER-SEEN@example.test');
    expect(again.status).toBe(422);
    // Each person signs in to their own organization's account with their own password.
    const other = await signIn(svc, 'taken.elsewhere@example.test', 'other org password 1');
    const me = (await (await svc.fetch('/api/v1/me', { headers: { cookie: other.cookie } })).json()) as {
      organization_id: string;
    };
    expect(me.organization_id).toBe(elsewhere.id);
  });
});

describe('messages on pages come from the service, not from a link', () => {
  it('a crafted ?notice= or ?error= puts no text on an admin page', async () => {
    const admin = await signIn(svc, svc.admin.email, svc.admin.password);
    const bait = 'Your account is locked. Call +1 555 0100 and read out your password.';
    for (const page of ['/people', '/settings', '/organization', '/databases', '/reviews', '/workflows']) {
      for (const kind of ['notice', 'error']) {
        const url = `${page}?${kind}=${encodeURIComponent(bait)}&${kind}_sig=forged`;
        const res = await svc.fetch(url, { headers: { cookie: admin.cookie }, redirect: 'manual' });
        expect(res.status, url).toBe(302);
        expect(res.headers.get('location'), url).toBe(page);
        const shown = await svc.fetch(res.headers.get('location')!, { headers: { cookie: admin.cookie } });
        expect(shown.status).toBe(200);
        expect(await shown.text()).not.toContain('Call +1 555');
      }
    }
  });

  it("the service's own message after an action still shows, for that session only", async () => {
    const admin = await signIn(svc, svc.admin.email, svc.admin.password);
    const res = await svc.fetch('/settings/sessions/end-others', {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrf }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    const page = await svc.fetch(location, { headers: { cookie: admin.cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('other session(s) ended.');
    // The same link opened in another session is not believed.
    const other = await signIn(svc, person.email, person.password);
    const elsewhere = await svc.fetch(location, { headers: { cookie: other.cookie }, redirect: 'manual' });
    expect(elsewhere.status).toBe(302);
    expect(elsewhere.headers.get('location')).toBe('/settings');
  });
});
