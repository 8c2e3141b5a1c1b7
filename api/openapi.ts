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

// A small self-contained reference: no CDN, no framework; its script (assets/docs.js) reads
// /openapi.json and lists every operation with its summary, security and request-body schema.
const DOCS_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>API reference · Countersign</title>
<link rel="stylesheet" href="/assets/docs.css"></head><body>
<h1>Countersign API</h1><p>The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>
<input id="q" placeholder="Filter operations…" autocomplete="off"><div id="ops">Loading…</div>
<script src="/assets/docs.js" defer></script></body></html>`;
