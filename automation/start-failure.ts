// Why Temporal would not start a run, in words an operator can act on: the SDK's
// own message is only "Failed to start Workflow"; the reason is in the gRPC error it wraps
// (a missing search attribute, an unknown namespace, an unreachable frontend). Temporal's
// messages name server objects, never the run's inputs, and are cut to a line.
export function startFailureReason(err: unknown): string {
  const seen = new Set<unknown>();
  const parts: string[] = [];
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const { message, details } = e as { message?: unknown; details?: unknown };
    const text =
      typeof details === 'string' && details ? details : typeof message === 'string' ? message : '';
    // gRPC messages start with the status code and name ("3 INVALID_ARGUMENT: …").
    const clean = text.replace(/^\d+ [A-Z_]+: /, '').trim();
    if (clean && !parts.includes(clean)) parts.push(clean);
    e = (e as { cause?: unknown }).cause;
  }
  const reason =
    parts.filter((p) => p !== 'Failed to start Workflow').join('; ') || 'Temporal did not start it';
  return reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
}

// gRPC status codes after which the server may have acted on the request although the client saw
// no answer (CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE): https://grpc.io/docs/guides/status-codes/
const AMBIGUOUS_CODES = new Set([1, 4, 14]);

/**
 * Whether a failed start may have started the execution after all (the answer was lost, not a
 * refusal). Such a run is left to the run sweep, which finds the execution or starts it under the
 * same id; failing it here would show `failed` for a run that goes on writing.
 */
export function startMayHaveHappened(err: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'number' && AMBIGUOUS_CODES.has(code)) return true;
    if (typeof message === 'string' && /^(1 CANCELLED|4 DEADLINE_EXCEEDED|14 UNAVAILABLE):/.test(message))
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
