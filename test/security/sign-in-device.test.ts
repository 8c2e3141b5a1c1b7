// Failed sign-ins never let strangers lock the real person out: an account's backoff is fed by
// every address, so a browser that signed in to the account before (a known device) is exempt
// from it, while every other attempt keeps it; a device cookie counts its own failures. And the
// password entered again for a single sign-on change counts in the sign-in limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { addPerson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    // Behind one reverse proxy: the client address is the last X-Forwarded-For entry, so a test
    // can speak from many addresses while sending packets only over loopback.
    env: { TRUSTED_PROXIES: '1', RATE_LIMIT_ACCOUNT_FAILURES: '3', RATE_LIMIT_ADDRESS_FAILURES: '50' },
  });
});
afterAll(async () => svc?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let nextAddress = 10;
/** A fresh documentation address (RFC 5737) for each stranger's attempt. */
const stranger = () => `198.51.100.${nextAddress++}`;

const login = (email: string, password: string, address: string, device?: string) =>
  svc.fetch('/login', {
    method: 'POST',
    headers: { 'x-forwarded-for': address, ...(device ? { cookie: device } : {}) },
    body: new URLSearchParams({ email, password, next: '/' }),
    redirect: 'manual',
  });

/** The device cookie a successful sign-in left, as a Cookie header value. */
function deviceOf(res: Response): string {
  const set = res.headers.getSetCookie().find((h) => h.startsWith('cs_device='));
  expect(set, 'a device cookie after sign-in').toBeTruthy();
  expect(set).toMatch(/HttpOnly/i);
  return set!.split(';')[0]!;
}

async function person(tag: string) {
  const who = { email: `device-${tag}@example.test`, password: `the ${tag} password 123` };
  await addPerson(svc, who);
  const first = await login(who.email, who.password, '203.0.113.5');
  expect(first.status).toBe(303);
  return { ...who, device: deviceOf(first) };
}

/**
 * What the reviewer's attacker does: one wrong guess from a new address each time the account's
 * backoff ends, until the wait after the last guess is 4 s (limit 3: 1 s, 2 s, 4 s).
 */
async function holdClosed(email: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await login(email, 'guess', stranger())).status).toBe(401);
  for (const wait of [1, 2]) {
    await sleep(wait * 1000 + 150);
    expect((await login(email, 'guess', stranger())).status).toBe(401);
  }
}

describe('a known device gets past the backoff strangers keep up', () => {
  it('the person with their device cookie gets in at once; without it the wait still holds', async () => {
    const me = await person('owner');
    await holdClosed(me.email);
    const without = await login(me.email, me.password, '203.0.113.6');
    expect(without.status).toBe(429);
    expect(Number(without.headers.get('retry-after'))).toBeGreaterThan(0);
    const withDevice = await login(me.email, me.password, '203.0.113.6', me.device);
    expect(withDevice.status).toBe(303);
    expect(withDevice.headers.getSetCookie().some((h) => /cs_session=/.test(h))).toBe(true);
  });

  it("another account's device cookie, or a forged one, does not exempt", async () => {
    const victim = await person('victim');
    const other = await person('other');
    const victimId = victim.device.split('=')[1]!.split('.')[0]!;
    const [, otherDevice, otherTag] = other.device.split('=')[1]!.split('.') as [string, string, string];
    // The victim's user id on the other account's device, and a MAC made up.
    const swapped = `cs_device=${victimId}.${otherDevice}.${otherTag}`;
    const madeUp = `cs_device=${victimId}.${otherDevice}.${'A'.repeat(otherTag.length)}`;
    await holdClosed(victim.email);
    for (const cookie of [other.device, swapped, madeUp])
      expect((await login(victim.email, victim.password, '203.0.113.7', cookie)).status, cookie).toBe(429);
    // The victim's own cookie gets in, so the refusals above were the cookies' doing.
    expect((await login(victim.email, victim.password, '203.0.113.7', victim.device)).status).toBe(303);
  });

  it('a device cookie that failed too often exempts no more', async () => {
    const me = await person('stolen');
    // A thief with the cookie guesses from new addresses; the backoff does not hold them back...
    for (let i = 0; i < 3; i++)
      expect((await login(me.email, 'guess', stranger(), me.device)).status).toBe(401);
    // ...until the device's own count is used up: from then on it waits like anyone else.
    expect((await login(me.email, 'guess', stranger(), me.device)).status).toBe(429);
    expect((await login(me.email, me.password, '203.0.113.9', me.device)).status).toBe(429);
  });

  it('a device still obeys the limit of its own address', async () => {
    const me = await person('address');
    for (let i = 0; i < 3; i++)
      expect((await login(me.email, 'guess', '198.51.100.200', me.device)).status).toBe(401);
    const res = await login(me.email, me.password, '198.51.100.200', me.device);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(60);
  });
});

describe('the password entered again for an SSO change is throttled like a sign-in', () => {
  it('wrong current_password attempts from one address end in 429, even with the right one', async () => {
    const [root] = await svc.deps.sql<
      { id: string }[]
    >`select id from users where email = ${svc.admin.email}`;
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: root!.id,
      name: 't',
      expiresAt: null,
    });
    const put = (current_password: string, address: string) =>
      svc.fetch('/api/v1/sso', {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'x-forwarded-for': address,
        },
        body: JSON.stringify({
          issuer: 'https://idp.example.test',
          client_id: 'countersign',
          client_secret: 'idp secret',
          provision_role: 'member',
          enabled: false,
          current_password,
        }),
      });
    for (let i = 0; i < 3; i++) {
      const wrong = await put('not the password', '198.51.100.210');
      expect(wrong.status).toBe(422);
    }
    const limited = await put(svc.admin.password, '198.51.100.210');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    expect((await svc.deps.sql`select 1 from sso_configs`).length).toBe(0);
    // The same password at the account's own sign-in from that address is refused as well...
    expect((await login(svc.admin.email, svc.admin.password, '198.51.100.210')).status).toBe(429);
  });
});
