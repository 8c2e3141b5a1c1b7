// What tests that start the service's processes share: waiting for a condition, a child's exit
// code, the search attributes a Temporal namespace has, and one workflow run through the API.
import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { expect } from 'vitest';

export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function exitCode(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((r) => child.once('exit', (code) => r(code)));
}

export async function customAttributes(t: {
  address: string;
  namespace: string;
}): Promise<Record<string, unknown>> {
  const connection = await Connection.connect({ address: t.address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: t.namespace,
    });
    return customAttributes ?? {};
  } finally {
    await connection.close();
  }
}

/**
 * Creates a one-step workflow (a condition on its integer input) through the REST API, runs it
 * and returns how the run ended. `waitReady: false` starts it without waiting for /readyz (dev
 * mode answers before its worker is up, and the run must still finish).
 */
export async function runOneWorkflow(
  url: string,
  apiKey: string,
  options: { name?: string; waitReady?: boolean } = {},
): Promise<string> {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  if (options.waitReady !== false)
    await until('readiness', async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined));
  const created = await fetch(`${url}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: options.name ?? 'process check',
      inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
      steps: [{ name: 'gate', action: { __type__: 'condition', expression: '${n} > 2', on_false: 'fail' } }],
    }),
  });
  expect(created.status).toBe(201);
  const wf = (await created.json()) as { id: string };
  const ran = await fetch(`${url}/api/v1/workflows/${wf.id}/run`, {
    method: 'POST',
    headers,
    body: '{"n": 5}',
  });
  expect(ran.status, await ran.clone().text()).toBe(200);
  const runId = /run_[0-9A-Z]{26}/.exec(await ran.text())![0];
  return until('the run to finish', async () => {
    const run = (await (
      await fetch(`${url}/api/v1/workflows/${wf.id}/runs/${runId}`, { headers })
    ).json()) as {
      status: string;
    };
    return run.status === 'running' ? undefined : run.status;
  });
}
