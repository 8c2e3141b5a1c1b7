// OpenTelemetry tracing, off unless the standard OTLP endpoint variable is set. Everything else in
// the code calls this module only; it loads the SDK (core/tracing-sdk.ts) when tracing is on, so a
// process without the variable loads no OpenTelemetry package and each call here is a plain
// function call. Spans carry names, ids and kinds, never statement values, parameters or secrets.
import type { Attributes } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ServerSpanEnd, TraceIds, TracingSdk } from './tracing-sdk.ts';

// Types only: importing them loads nothing.
export type { ServerSpanEnd, TraceIds } from './tracing-sdk.ts';

/** The process a span comes from: the default service name is `countersign-<role>`. */
export type TracingRole = 'serve' | 'worker';

let sdk: TracingSdk | null = null;

/**
 * Whether the environment asks for tracing: an OTLP endpoint for traces (OTEL_EXPORTER_OTLP_ENDPOINT,
 * or the traces-only OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and OTEL_SDK_DISABLED not `true`
 * (OpenTelemetry SDK environment variables, "General SDK Configuration").
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the SDK when the environment asks for it (and not twice in one process: `serve
 * --with-worker` shares one); returns whether tracing is on. The exporter, sampler, batch sizes
 * and resource attributes follow the standard OTEL_* variables of the process environment.
 */
export async function startTracing(
  role: TracingRole,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (sdk) return true;
  if (!tracingRequested(env)) return false;
  const { loadTracingSdk } = await import('./tracing-sdk.ts');
  sdk = await loadTracingSdk(`countersign-${role}`);
  return true;
}

/** Sends the spans still buffered and stops the SDK (at process end). */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = null;
  await running?.shutdown();
}

export function tracingActive(): boolean {
  return sdk !== null;
}

/** The trace and span of the code running now, when tracing is on and a span is active. */
export function currentTraceIds(): TraceIds | undefined {
  return sdk?.currentIds();
}

/** Runs `fn` in a child span of the active one (or as-is when tracing is off). */
export function inSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return sdk ? sdk.inSpan(name, attributes, fn, 'internal') : fn();
}

/** A span for a call to another system (the statement on a target database: db.* attributes). */
export function inClientSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return sdk ? sdk.inSpan(name, attributes, fn, 'client') : fn();
}

/**
 * Runs `fn` in a server span whose parent is the request's W3C `traceparent` (and `tracestate`)
 * when it has a valid one; `fn` returns how to name and close the span.
 */
export async function inServerSpan(
  headers: (name: string) => string | undefined,
  fn: () => Promise<ServerSpanEnd>,
): Promise<void> {
  if (!sdk) {
    await fn();
    return;
  }
  await sdk.inServerSpan(headers, fn);
}

/** The Temporal client's interceptors: a start carries its trace context in the workflow headers. */
export function temporalClientInterceptors(): WorkflowClientInterceptor[] {
  return sdk ? sdk.clientInterceptors() : [];
}

/** What the worker adds to Worker.create when tracing is on: activity interceptors, span sink. */
export function temporalWorkerTracing(): ReturnType<TracingSdk['workerOptions']> | null {
  return sdk ? sdk.workerOptions() : null;
}
