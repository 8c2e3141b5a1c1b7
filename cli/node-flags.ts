// The V8 flags `serve` and `worker` run with: `npm start`, `npm run worker`, the Dockerfile's
// ENTRYPOINT (each a literal copy, checked against this list by test/foundation/node-flags.test.ts)
// and the benches that measure those processes. Both bound memory, not speed (docs/operations.md,
// "Memory"):
// - a young generation of at most 2 × 8 MB: V8's default lets it grow to 64 MB under load;
// - an old generation that grows by half of what the last full collection kept alive, where V8
//   otherwise lets a heap with a high allocation rate (the console's pages) grow up to fourfold
//   before it collects again: a serve that rendered the console about 3800 times held 323 MB,
//   and 197 MB with this flag.
export const NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=50'] as const;
