import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import type { AppEnv } from '../env.ts';
import { doc } from '../openapi.ts';

/** Liveness says the process serves HTTP; readiness says its store and Temporal answer. */
export function healthRoutes(deps: Pick<Deps, 'sql' | 'temporal'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/healthz', doc('Health', 'Liveness', { auth: ['none'] }), (c) => c.json({ status: 'ok' }));
  app.get('/readyz', doc('Health', 'Readiness: store and Temporal', { auth: ['none'] }), async (c) => {
    const [store, temporal] = await Promise.all([
      check(async () => {
        await deps.sql`select 1`;
      }),
      check(async () => {
        if (!deps.temporal) throw new Error('not configured');
        await deps.temporal.connection.workflowService.getSystemInfo({});
      }),
    ]);
    const ready = store === 'ok' && temporal === 'ok';
    return c.json({ status: ready ? 'ready' : 'not ready', checks: { store, temporal } }, ready ? 200 : 503);
  });
  return app;
}

async function check(fn: () => Promise<void>, timeoutMs = 2000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const work = fn();
  // A check that loses the race to the timeout may still fail later: observe it.
  work.catch(() => {});
  try {
    await Promise.race([
      work,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch (err) {
    // The reason is a short fixed phrase: driver messages can name hosts and users.
    return err instanceof Error && /timed out|not configured/.test(err.message) ? err.message : 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}
