// The OpenTelemetry SDK, loaded by core/tracing.ts only when tracing is on. Spans leave through the
// OTLP/HTTP exporter (JSON), which reads OTEL_EXPORTER_OTLP_* itself; the batch processor reads
// OTEL_BSP_*, the provider OTEL_TRACES_SAMPLER and OTEL_PROPAGATORS (W3C trace context by default).
import {
  type Attributes,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowClientInterceptor } from '@temporalio/client';
// The parts of the package that load neither the worker nor its native engine: `serve` has none.
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';

/** The W3C trace context of a span (trace-context §3.2), as logs and audit entries name it. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** What the HTTP span is told once the request has been answered. */
export interface ServerSpanEnd {
  name: string;
  attributes: Attributes;
  failed: boolean;
}

export interface TracingSdk {
  currentIds(): TraceIds | undefined;
  inSpan<T>(
    name: string,
    attributes: Attributes,
    fn: () => Promise<T>,
    kind: 'internal' | 'client',
  ): Promise<T>;
  inServerSpan(
    headers: (name: string) => string | undefined,
    fn: () => Promise<ServerSpanEnd>,
  ): Promise<void>;
  clientInterceptors(): WorkflowClientInterceptor[];
  workerOptions(): { activity: ActivityInterceptorsFactory[]; sinks: InjectedSinks<OpenTelemetrySinks> };
  shutdown(): Promise<void>;
}

const TRACER = 'countersign';

export async function loadTracingSdk(defaultServiceName: string): Promise<TracingSdk> {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the env detector) win over the default.
  const resource = new Resource({ 'service.name': defaultServiceName }).merge(
    envDetectorSync.detect({}) as Resource,
  );
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // Global provider, AsyncLocalStorage context manager and the W3C propagator.
  provider.register();
  const tracer = trace.getTracer(TRACER);

  const run = async <T>(span: Span, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      // The error's kind only: messages may quote a statement or a server's answer.
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  };

  return {
    currentIds() {
      const ctx = trace.getSpan(context.active())?.spanContext();
      return ctx && isSpanContextValid(ctx) ? { trace_id: ctx.traceId, span_id: ctx.spanId } : undefined;
    },
    inSpan(name, attributes, fn, kind) {
      return tracer.startActiveSpan(
        name,
        { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes },
        (span) => run(span, fn),
      );
    },
    async inServerSpan(headers, fn) {
      // W3C Trace Context §3: a valid traceparent (and its tracestate) makes this span its child.
      const parent = propagation.extract(
        ROOT_CONTEXT,
        {},
        { get: (_carrier, key) => headers(key), keys: () => ['traceparent', 'tracestate'] },
      );
      await tracer.startActiveSpan('HTTP', { kind: SpanKind.SERVER }, parent, async (span) => {
        try {
          const end = await fn();
          span.updateName(end.name);
          span.setAttributes(end.attributes);
          if (end.failed) span.setStatus({ code: SpanStatusCode.ERROR });
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    clientInterceptors() {
      return [new OpenTelemetryWorkflowClientInterceptor({ tracer })];
    },
    workerOptions() {
      return {
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
        // Spans made inside the workflow sandbox leave through this sink (workflows/tracing.ts).
        sinks: { exporter: makeWorkflowExporter(processor, resource) },
      };
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
