// What tests that start the service's processes share: waiting for a condition, a child's exit
// code, and the search attributes a Temporal namespace has.
import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';

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
