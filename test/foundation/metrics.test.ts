import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

describe('GET /metrics (Prometheus)', () => {
  it('reports request latency by route, governed queries by origin and outcome, and workflow runs', async () => {
    await svc.fetch('/healthz');
    const pg = servers().postgres;
    const db = await (
      await svc.fetch('/api/v1/desk/databases', {
        method: 'POST',
        headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'metrics',
          adapter: 'postgres',
          hostname: pg.host,
          port: pg.port,
          database: pg.database,
          credentials: [{ username: pg.user, password: pg.password }],
        }),
      })
    ).json();
    const before = await scrape();
    const ran = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: db.id, statement: 'select 1 as one', params: [] }),
    });
    expect(ran.status).toBeLessThan(300);
    const after = await scrape();

    expect(after).toMatch(/countersign_http_request_duration_seconds_bucket\{[^}]*route="\/healthz"[^}]*\}/);
    expect(after).toContain('# TYPE countersign_workflow_runs gauge');
    const allowed = (text: string) =>
      Number(
        /countersign_governed_queries_total\{origin="user",outcome="allowed"\} (\d+)/.exec(text)?.[1] ?? 0,
      );
    expect(allowed(after)).toBe(allowed(before) + 1);
  });
});

async function scrape(): Promise<string> {
  const res = await svc.fetch('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}
