// Why Temporal would not start a run, in words an operator can act on (issue 14.1): the SDK's
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
