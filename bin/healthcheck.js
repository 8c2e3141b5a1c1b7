#!/usr/bin/env node
// Container health check without curl (the slim image has none): exits 0 when the URL answers
// 2xx within 3 s. docker-compose.yml: `node bin/healthcheck.js http://127.0.0.1:3000/readyz`.
const url = process.argv[2] ?? 'http://127.0.0.1:3000/readyz';
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
