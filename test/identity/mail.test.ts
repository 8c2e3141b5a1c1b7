// Invitations, password resets and review requests by e-mail, against a local SMTP server
// (the smtp-server package on loopback): the message arrives, and its one-time link works once.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}
const inbox: Received[] = [];
let smtp: SMTPServer;
let svc: TestService;
let admin: { cookie: string; csrf: string };

/** The text of a message: quoted-printable soft breaks joined and escapes decoded. */
function bodyOf(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

async function mailTo(address: string, subject: RegExp, timeoutMs = 10_000): Promise<Received> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = inbox.find((m) => m.to.includes(address) && subject.test(bodyOf(m.raw)));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${address} matching ${subject}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const linkIn = (m: Received) =>
  /(http:\/\/127\.0\.0\.1:\d+\/set-password\?token=[\w%-]+)/.exec(bodyOf(m.raw))![1]!;

const setPassword = (link: string, password: string) =>
  svc.fetch('/set-password', {
    method: 'POST',
    body: new URLSearchParams({ token: new URL(link).searchParams.get('token')!, password }),
    redirect: 'manual',
  });

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, done) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => {
        raw += chunk.toString('utf8');
      });
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  svc = await startTestService({
    env: { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'countersign@example.test' },
  });
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
});
afterAll(async () => {
  await svc?.stop();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

describe('invitations by e-mail', () => {
  it('an invitation from the page is e-mailed; the page redirects and never shows the link', async () => {
    const res = await svc.fetch('/people', {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrf, email: 'mailed.invite@example.test', role: 'member' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(decodeURIComponent(res.headers.get('location')!)).toContain(
      'link to choose a password was e-mailed',
    );
    expect(res.headers.get('set-cookie') ?? '').not.toContain('cs_people_link');
    const mail = await mailTo('mailed.invite@example.test', /Subject: You are invited to Countersign/);
    expect(mail.from).toBe('countersign@example.test');
    expect(bodyOf(mail.raw)).toContain(`${svc.admin.email} invited you`);
    const link = linkIn(mail);
    expect((await svc.fetch(new URL(link).pathname + new URL(link).search)).status).toBe(200);
    // Choosing the password signs the person in: a session cookie and the dashboards.
    const set = await setPassword(link, 'invited password 123');
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe('/dashboards');
    const session = /cs_session=([^;]+)/.exec(set.headers.get('set-cookie') ?? '')![1]!;
    const me = await svc.fetch('/api/v1/me', { headers: { cookie: `cs_session=${session}` } });
    expect(((await me.json()) as { email: string }).email).toBe('mailed.invite@example.test');
    // Once only.
    expect((await setPassword(link, 'another password 456')).status).toBe(410);
  });
});

describe('forgotten passwords', () => {
  it('the sign-in page links to the reset form', async () => {
    expect(await (await svc.fetch('/login')).text()).toContain('href="/forgot-password"');
  });

  it('answers the same for a known and an unknown address, and mails only the account', async () => {
    const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
    await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: 'forgetful@example.test',
      role: 'member',
      password: 'the old password 1',
    });
    const ask = (email: string) =>
      svc.fetch('/forgot-password', { method: 'POST', body: new URLSearchParams({ email }) });
    const known = await ask('forgetful@example.test');
    const unknown = await ask('nobody.here@example.test');
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(await known.text()).toBe(await unknown.text());
    const mail = await mailTo('forgetful@example.test', /Subject: Reset your Countersign password/);
    await new Promise((r) => setTimeout(r, 500));
    expect(inbox.some((m) => m.to.includes('nobody.here@example.test'))).toBe(false);
    // The request is on the audit chain once, as the person's own, and holds no link.
    const events = await svc.deps.sql<{ event: string; actor_user_id: string; t: string }[]>`
      select a.event, a.actor_user_id, row_to_json(a)::text as t from audit_log a
      where a.event like 'user.password%' and a.subject->>'user_id' = (
        select id from users where email = 'forgetful@example.test')`;
    expect(events.map((e) => e.event)).toEqual(['user.password_reset_requested']);
    const link = linkIn(mail);
    const token = new URL(link).searchParams.get('token');
    expect(token).toBeTruthy();
    expect(events[0]!.t).not.toContain(token!);
    expect((await setPassword(link, 'the new password 22')).status).toBe(303);
    expect((await setPassword(link, 'the newer password 333')).status).toBe(410);
    await signIn(svc, 'forgetful@example.test', 'the new password 22');
  });

  it('is rate-limited per address and account', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (
          await svc.fetch('/forgot-password', {
            method: 'POST',
            body: new URLSearchParams({ email: 'limited@example.test' }),
          })
        ).status,
      );
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses[3]).toBe(429);
  });
});

describe('review requests by e-mail', () => {
  it('a query request waiting for review is e-mailed to the people who may review it', async () => {
    const pg = servers().postgres;
    const res = await svc.fetch('/api/v1/desk/databases', {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'reviewed-db',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        credentials: [
          { username: pg.user, password: pg.password, reviews_required: 1, default_credential: true },
        ],
      }),
    });
    const dbId = ((await res.json()) as { id: string }).id;
    const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
    const author = await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: 'author@example.test',
      role: 'member',
      password: 'author password 1',
    });
    const token = (await createPersonalToken(svc.deps.sql, { userId: author.id, name: 't', expiresAt: null }))
      .secret;
    const q = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: dbId, statement: 'select 1 as reviewed_mail' }),
    });
    const body = (await q.json()) as { id?: string; request?: { id: string } };
    const id = body.request?.id ?? body.id!;
    expect(id).toMatch(/^\w+_/);
    const mail = await mailTo(svc.admin.email, /Subject: Review requested: /);
    const text = bodyOf(mail.raw);
    expect(text).toContain(id);
    expect(text).toContain('select 1 as reviewed_mail');
    expect(text).toContain(`${svc.url}/reviews`);
    await new Promise((r) => setTimeout(r, 300));
    expect(inbox.some((m) => m.to.includes('author@example.test') && bodyOf(m.raw).includes(id))).toBe(false);
  });
});
