#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader: one code path for dev and production.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
const code = await main(process.argv.slice(2));
// A finished command (or a stopped server) must not be kept alive by idle pools or timers.
process.exit(code);
