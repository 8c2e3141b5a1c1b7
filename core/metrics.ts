import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * Process-wide Prometheus metrics (DESIGN.md Conventions). Counters live in the process that does
 * the work; `/metrics` adds store-derived gauges at scrape time so figures that span processes
 * (workflow runs finished by the worker) are right whichever replica is scraped.
 */
export const processRegistry = new Registry();
// The event-loop lag histogram samples every 50 ms rather than prom-client's 10: a 10 ms timer
// wakes an idle process 100 times a second, two thirds of its idle CPU (`npm run bench --
// processes`, idle CPU). 300 samples per 15 s scrape still give the lag's percentiles.
collectDefaultMetrics({
  register: processRegistry,
  prefix: 'countersign_',
  eventLoopMonitoringPrecision: 50,
});

export const httpRequestDuration = new Histogram({
  name: 'countersign_http_request_duration_seconds',
  help: 'HTTP request latency by route pattern, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

export const governedQueries = new Counter({
  name: 'countersign_governed_queries_total',
  help: 'Governed query attempts by origin and outcome (every audited attempt counts once)',
  labelNames: ['origin', 'outcome'] as const,
  registers: [processRegistry],
});

export const mcpToolCalls = new Counter({
  name: 'countersign_mcp_tool_calls_total',
  help: 'MCP tools/call requests of a known tool by route: door (a plain 2025-11-25 call answered in front of the router, api/mcp/door.ts), direct (such a call through the router, api/mcp/tool-call.ts) or sdk (through the SDK transport)',
  labelNames: ['route'] as const,
  registers: [processRegistry],
});
