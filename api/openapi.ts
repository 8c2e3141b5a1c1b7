import type { Hono, MiddlewareHandler } from 'hono';
import { describeRoute, openAPIRouteHandler, resolver } from 'hono-openapi';
import type { GenericSchema } from 'valibot';
import type { Config } from '../config/env.ts';
import type { AppEnv } from './env.ts';

/** Credential kinds as OpenAPI security schemes (SPEC.md 5). */
export type Auth = 'apiKey' | 'bearer' | 'session' | 'oauth' | 'none';

const PROBLEM = {
  description: 'RFC 9457 problem details (`errors: [{path, message}]` on 422)',
  content: { 'application/problem+json': { schema: { type: 'object' as const } } },
};

/**
 * Describes one route for /openapi.json. The request body is the same valibot schema the
 * handler parses with `jsonBody`, so the document cannot drift from the validation.
 */
export function doc(
  tag: string,
  summary: string,
  options: { auth?: Auth[]; body?: GenericSchema; status?: number; text?: boolean } = {},
): MiddlewareHandler {
  const auth = options.auth ?? ['apiKey', 'bearer', 'session'];
  const status = options.status ?? 200;
  return describeRoute({
    tags: [tag],
    summary,
    security: auth.includes('none') ? [] : auth.map((a) => ({ [a]: [] })),
    ...(options.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: resolver(options.body) } },
          },
        }
      : {}),
    responses: {
      [status]: options.text
        ? { description: 'plain text', content: { 'text/plain': { schema: { type: 'string' } } } }
        : { description: 'success' },
      default: PROBLEM,
    },
  });
}

/** GET /openapi.json and GET /docs (an interactive reference over the same document). */
export function mountOpenApi(app: Hono<AppEnv>, config: Config): void {
  app.get(
    '/openapi.json',
    openAPIRouteHandler(app, {
      documentation: {
        openapi: '3.1.0',
        info: {
          title: 'Countersign',
          version: '1',
          description:
            'Database governance: databases, governed queries, reviews, audit, workflows, dashboards.',
        },
        servers: [{ url: config.baseUrl }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
            bearer: { type: 'http', scheme: 'bearer', description: 'personal access token' },
            session: { type: 'apiKey', in: 'cookie', name: 'cs_session' },
            oauth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'OAuth 2.1 access token (MCP)',
            },
          },
        },
      },
      defaultValidationErrorResponse: false,
    }),
  );
  app.get('/docs', (c) => c.html(DOCS_PAGE));
}

// A small self-contained reference: no CDN, no framework; reads /openapi.json and lists every
// operation with its summary, security and request-body schema.
const DOCS_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>API reference · Countersign</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:1rem;color:#1b1f24}
h2{margin-top:2rem;border-bottom:1px solid #d8dde3}details{border:1px solid #d8dde3;border-radius:6px;margin:.4rem 0;padding:.4rem .7rem}
summary{cursor:pointer}code.m{display:inline-block;min-width:4.5rem;font-weight:700}pre{background:#f4f6f8;padding:.6rem;overflow:auto}
input{width:100%;padding:.5rem;font:inherit;margin:.5rem 0}</style></head><body>
<h1>Countersign API</h1><p>The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>
<input id="q" placeholder="Filter operations…" autocomplete="off"><div id="ops">Loading…</div>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]);
fetch('/openapi.json').then((r) => r.json()).then((spec) => {
  const byTag = {};
  for (const [path, item] of Object.entries(spec.paths)) for (const [method, op] of Object.entries(item)) {
    (byTag[(op.tags || ['other'])[0]] ||= []).push({ path, method, op });
  }
  const html = Object.keys(byTag).sort().map((tag) => '<h2>' + esc(tag) + '</h2>' + byTag[tag].map(({ path, method, op }) => {
    const body = op.requestBody ? '<p>Request body</p><pre>' + esc(JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)) + '</pre>' : '';
    const sec = (op.security || []).map((s) => Object.keys(s)[0]).join(', ') || 'none';
    return '<details data-k="' + esc((method + ' ' + path + ' ' + op.summary).toLowerCase()) + '"><summary><code class="m">' + method.toUpperCase() + '</code> <code>' + esc(path) + '</code> — ' + esc(op.summary || '') + '</summary><p>Credentials: ' + esc(sec) + '</p>' + body + '</details>';
  }).join('')).join('');
  document.getElementById('ops').innerHTML = html;
  document.getElementById('q').addEventListener('input', (e) => {
    for (const d of document.querySelectorAll('details')) d.hidden = !d.dataset.k.includes(e.target.value.toLowerCase());
  });
});
</script></body></html>`;
