// Tracing is off unless the OTLP endpoint variable is set, and then costs nothing: no
// OpenTelemetry package is loaded, no provider registered, no exporter made. When it is set, the
// SDK starts, spans nest, and the exporter posts them as OTLP/HTTP JSON to the endpoint.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  currentTraceIds,
  inClientSpan,
  inSpan,
  startTracing,
  stopTracing,
  tracingActive,
  tracingRequested,
} from './tracing.ts';

/** The global registry of @opentelemetry/api (its `global-utils`): present once an API copy loaded. */
const OTEL_API = Symbol.for('opentelemetry.js.api.1');

afterAll(() => stopTracing());

describe('tracing', () => {
  it('is off, with nothing loaded or registered, when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    expect(tracingRequested({})).toBe(false);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
    expect(await startTracing('serve', {})).toBe(false);
    expect(tracingActive()).toBe(false);
    // No API copy was ever loaded in this process, so no provider, exporter or context manager.
    expect(OTEL_API in globalThis).toBe(false);
    expect(await inSpan('governed query', {}, async () => currentTraceIds())).toBeUndefined();
  });

  it('with the variable set, exports nested spans as OTLP/HTTP JSON to the endpoint', async () => {
    const bodies: { type: string; body: string; path: string }[] = [];
    const receiver = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        bodies.push({ type: req.headers['content-type'] ?? '', body, path: req.url ?? '' });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const saved = { ...process.env };
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_SERVICE_NAME = 'tracing-unit';
    try {
      expect(await startTracing('worker')).toBe(true);
      expect(OTEL_API in globalThis).toBe(true);
      const ids = await inSpan('outer', {}, async () => {
        const outer = currentTraceIds();
        const inner = await inClientSpan('postgresql', { 'db.system': 'postgresql' }, async () =>
          currentTraceIds(),
        );
        return { outer, inner };
      });
      expect(ids.outer?.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(ids.inner?.trace_id).toBe(ids.outer?.trace_id);
      expect(ids.inner?.span_id).not.toBe(ids.outer?.span_id);
      await stopTracing();
      expect(bodies.length).toBeGreaterThan(0);
      expect(bodies[0]!.path).toBe('/v1/traces');
      expect(bodies[0]!.type).toContain('application/json');
      const text = bodies.map((b) => b.body).join('\n');
      expect(text).toContain(ids.outer!.trace_id);
      expect(text).toContain('"tracing-unit"');
      expect(text).toContain('"postgresql"');
    } finally {
      process.env = saved;
      await new Promise((r) => receiver.close(r));
    }
  });
});
