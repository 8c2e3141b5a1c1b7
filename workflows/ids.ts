// Run ids made inside a workflow. Date.now() and Math.random() are deterministic in the Temporal
// sandbox (replay gives the same values), so the id survives a worker restart unchanged.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A `run_` id: prefix + 26-character ULID, the same shape as store/ids.ts makes. */
export function workflowRunId(): string {
  let time = Date.now();
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = CROCKFORD[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  let randomPart = '';
  for (let i = 0; i < 16; i++) randomPart += CROCKFORD[Math.floor(Math.random() * 32)];
  return `run_${timePart}${randomPart}`;
}
