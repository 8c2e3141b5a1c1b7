import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

interface Spec {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<
    string,
    Record<
      string,
      {
        summary?: string;
        tags?: string[];
        requestBody?: { content: Record<string, { schema: { required?: string[] } }> };
      }
    >
  >;
}

describe('the API describes itself', () => {
  it('serves an OpenAPI 3.1 document whose request bodies are the validation schemas', async () => {
    const res = await svc.fetch('/openapi.json');
    expect(res.status).toBe(200);
    const spec = (await res.json()) as Spec;
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.servers[0]!.url).toBe(svc.deps.config.baseUrl);
    const create = spec.paths['/api/v1/desk/databases']!.post!;
    expect(create.summary).toMatch(/Register a database/);
    expect(create.requestBody!.content['application/json']!.schema.required).toEqual(
      expect.arrayContaining(['name', 'adapter', 'hostname', 'database', 'credentials']),
    );
  });

  it('new routes carry a description and an example of their body', async () => {
    const spec = (await (await svc.fetch('/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>
      >;
    };
    for (const [path, method] of [
      ['/api/v1/users', 'post'],
      ['/api/v1/users/{id}', 'patch'],
      ['/api/v1/desk/databases/{id}/credentials/{credentialId}/grants', 'post'],
      ['/api/v1/desk/query-requests', 'post'],
    ] as const) {
      const schema = spec.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
      expect(schema, `${method} ${path}`).toBeDefined();
      expect(typeof schema!.description, `${method} ${path}`).toBe('string');
      expect(Array.isArray(schema!.examples), `${method} ${path}`).toBe(true);
    }
  });

  it('documents every REST route of the app (SPEC.md 4: /api/v1 and /v1)', async () => {
    const spec = (await (await svc.fetch('/openapi.json')).json()) as Spec;
    const app = createApp(svc.deps);
    const routes = app.routes
      .filter((r) => r.method !== 'ALL' && /^\/(api\/)?v1\//.test(r.path))
      // Agents are documented in agent/README.md and served by their own router.
      .filter((r) => !r.path.startsWith('/api/v1/agents'))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    const documented = new Set(
      Object.entries(spec.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method} ${path}`),
      ),
    );
    const missing = [...new Set(routes)].filter((r) => !documented.has(r));
    expect(missing).toEqual([]);
    expect(routes.length).toBeGreaterThan(40);
  });

  it('serves a readable reference at /docs', async () => {
    const res = await svc.fetch('/docs');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('/openapi.json');
    expect(html).toContain('<title>API reference');
  });
});
