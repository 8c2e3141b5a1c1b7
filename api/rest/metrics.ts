import { Hono } from 'hono';
import { Gauge, Registry } from 'prom-client';
import type { Deps } from '../../core/deps.ts';
import { processRegistry } from '../../core/metrics.ts';
import type { AppEnv } from '../env.ts';

/**
 * Prometheus metrics: request latency by route, governed queries by origin and outcome (this
 * process), and workflow runs by status (from the store, so every replica reports the same).
 */
export function metricsRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const storeRegistry = new Registry();
  new Gauge({
    name: 'countersign_workflow_runs',
    help: 'Workflow runs by status, across the organization store',
    labelNames: ['status'] as const,
    registers: [storeRegistry],
    async collect() {
      this.reset();
      const rows = await deps.sql<{ status: string; n: number }[]>`
        select status, count(*)::int as n from workflow_runs group by status`;
      for (const row of rows) this.set({ status: row.status }, row.n);
    },
  });
  app.get('/metrics', async (c) => {
    const merged = Registry.merge([processRegistry, storeRegistry]);
    return c.body(await merged.metrics(), 200, { 'content-type': merged.contentType });
  });
  return app;
}
