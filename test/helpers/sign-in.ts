// Sign-in through the login form, for tests and for the bench's console door (bench/support/doors.ts).
// A module of its own, without vitest: the bench imports it outside a test run.

/** Anything that fetches a path on a running service. */
export interface FetchesPaths {
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Signs in through the login form like a browser and returns the session cookie and CSRF token. */
export async function signIn(
  svc: FetchesPaths,
  email: string,
  password: string,
): Promise<{ cookie: string; csrf: string }> {
  const res = await svc.fetch('/login', {
    method: 'POST',
    body: new URLSearchParams({ email, password, next: '/' }),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`sign-in failed with ${res.status}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = /cs_session=([^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error('no session cookie');
  const me = await svc.fetch('/api/v1/me', { headers: { cookie: `cs_session=${cookie}` } });
  const { csrf_token } = (await me.json()) as { csrf_token: string };
  return { cookie: `cs_session=${cookie}`, csrf: csrf_token };
}
