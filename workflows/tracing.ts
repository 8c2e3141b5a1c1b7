// Workflow interceptors, bundled with the workflow code (worker/worker.ts TRACING_WORKFLOW_MODULE):
// OpenTelemetry's from @temporalio/interceptors-opentelemetry, for the runs whose start carried a
// trace context in its Temporal headers, so the run's workflow task and activity spans join the
// trace of the request that started it (their spans leave through the worker's `exporter` sink).
// A run started without one — tracing off in `serve`, or a history from before tracing — is left
// exactly as it was: the decision is read from the run's own start, so a replay makes the same one.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInterceptors } from '@temporalio/workflow';

/** Where the client interceptor puts the trace context (the package's TRACE_HEADER). */
const TRACE_HEADER = '_tracer-data';

export const interceptors = (): WorkflowInterceptors => {
  let inbound: OpenTelemetryInboundInterceptor | null = null;
  let outbound: OpenTelemetryOutboundInterceptor | null = null;
  return {
    inbound: [
      {
        execute(input, next) {
          if (!(TRACE_HEADER in input.headers)) return next(input);
          inbound = new OpenTelemetryInboundInterceptor();
          outbound = new OpenTelemetryOutboundInterceptor();
          return inbound.execute(input, next);
        },
        handleSignal: (input, next) => (inbound ? inbound.handleSignal(input, next) : next(input)),
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (outbound ? outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) =>
          outbound ? outbound.scheduleLocalActivity(input, next) : next(input),
        startChildWorkflowExecution: (input, next) =>
          outbound ? outbound.startChildWorkflowExecution(input, next) : next(input),
        continueAsNew: (input, next) => (outbound ? outbound.continueAsNew(input, next) : next(input)),
        signalWorkflow: (input, next) => (outbound ? outbound.signalWorkflow(input, next) : next(input)),
        getLogAttributes: (input, next) => (outbound ? outbound.getLogAttributes(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose: (input, next) =>
          inbound ? new OpenTelemetryInternalsInterceptor().dispose(input, next) : next(input),
      },
    ],
  };
};
