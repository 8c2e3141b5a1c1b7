import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { mayChangeAccess, queryOnly } from './access-settled.ts';

type Env = { Variables: { accessUnchanged?: boolean } };

/** What the outer middleware sees after the route ran: whether the answer waits for the caches. */
async function waits(app: Hono<Env>, method: string, path: string): Promise<boolean> {
  let seen: boolean | null = null;
  const outer = new Hono<Env>();
  outer.use('*', async (c, next) => {
    await next();
    seen = mayChangeAccess(c.req.method, c.res.status, c.get('accessUnchanged') === true);
  });
  outer.route('/', app);
  await outer.request(path, { method });
  if (seen === null) throw new Error('the outer middleware did not run');
  return seen;
}

describe('which answers wait for the access caches', () => {
  const routes = new Hono<Env>();
  routes.post('/run', queryOnly(), (c) => c.text('ran'));
  routes.post('/grant', (c) => c.text('granted'));
  const sub = new Hono<Env>();
  sub.use('*', queryOnly());
  sub.post('/:id/approve', (c) => c.text('approved'));
  routes.route('/requests', sub);

  it('a route marked query-only does not wait, also when the mark is on a mounted router', async () => {
    expect(await waits(routes, 'POST', '/run')).toBe(false);
    expect(await waits(routes, 'POST', '/requests/qr_1/approve')).toBe(false);
  });

  it('an unmarked change waits', async () => {
    expect(await waits(routes, 'POST', '/grant')).toBe(true);
    expect(mayChangeAccess('DELETE', 204, false)).toBe(true);
    expect(mayChangeAccess('PATCH', 200, false)).toBe(true);
  });

  it('reads and refusals never wait', () => {
    expect(mayChangeAccess('GET', 200, false)).toBe(false);
    expect(mayChangeAccess('POST', 422, false)).toBe(false);
  });
});
