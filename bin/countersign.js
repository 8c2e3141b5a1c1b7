#!/usr/bin/env node
// Runs the compiled build in dist/ when it was built from the sources as they are now (`npm run
// build`, bin/build.js; checked against the size, mtime and hash of every source file it was made
// from), else the TypeScript sources through tsx's loader. A stale dist/ never runs: the sources
// do (and on a terminal a line on stderr says why). COUNTERSIGN_RUN=sources always runs the
// sources; COUNTERSIGN_RUN=dist refuses to start without a current build.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildState } from './build-state.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const wanted = process.env.COUNTERSIGN_RUN ?? '';
if (!['', 'dist', 'sources'].includes(wanted)) {
  process.stderr.write(`countersign: COUNTERSIGN_RUN must be dist or sources, not ${wanted}\n`);
  process.exit(2);
}
const state = wanted === 'sources' ? { fresh: false, missing: true } : buildState(dist);
if (state.fresh) {
  await import('../dist/countersign.js');
} else if (wanted === 'dist') {
  process.stderr.write(`countersign: COUNTERSIGN_RUN=dist but ${state.reason}: run npm run build\n`);
  process.exit(2);
} else {
  if (!state.missing && process.stderr.isTTY)
    process.stderr.write(`countersign: not running dist/ (${state.reason}): running the sources\n`);
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../cli/main.ts');
  const code = await main(process.argv.slice(2));
  // A finished command (or a stopped server) must not be kept alive by idle pools or timers.
  process.exit(code);
}
