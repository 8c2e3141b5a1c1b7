// The process entry of the compiled build (dist/countersign.js); bin/countersign.js does the same
// for the sources.
import { main } from './main.ts';

const code = await main(process.argv.slice(2));
// A finished command (or a stopped server) must not be kept alive by idle pools or timers.
process.exit(code);
