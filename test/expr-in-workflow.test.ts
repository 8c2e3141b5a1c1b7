// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// Proves expr/ bundles with the Temporal workflow bundler and runs inside the workflow sandbox
// (DESIGN.md: workflows/ imports expr/, and conditions are evaluated inside the workflow).
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { exprErrorWorkflow, exprWorkflow } from './fixtures/expr-workflow.ts';
import { servers } from './harness/servers.ts';

const workflowsPath = fileURLToPath(new URL('./fixtures/expr-workflow.ts', import.meta.url));

describe('expr inside a Temporal workflow', () => {
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let client: Client;

  beforeAll(async () => {
    const { address, namespace } = servers().temporal;
    connection = await Connection.connect({ address });
    nativeConnection = await NativeConnection.connect({ address });
    client = new Client({ connection, namespace });
  });

  afterAll(async () => {
    await nativeConnection?.close();
    await connection?.close();
  });

  it('evaluates conditions and renders SQL in the sandbox', async () => {
    const { namespace } = servers().temporal;
    const taskQueue = `expr-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({ connection: nativeConnection, namespace, taskQueue, workflowsPath });

    const run = <T>(workflow: string, args: [string, Record<string, unknown>]) =>
      client.workflow.execute<(...a: typeof args) => Promise<T>>(workflow, {
        args,
        taskQueue,
        workflowId: `${taskQueue}-${workflow}-${Math.random().toString(36).slice(2)}`,
        workflowExecutionTimeout: '30s',
      });

    const [pass, fail, failure] = await worker.runUntil(
      Promise.all([
        run<Awaited<ReturnType<typeof exprWorkflow>>>('exprWorkflow', [
          '${step.q.output.num_rows} > 5 && ${approved}',
          { approved: true, name: "O'Brien" },
        ]),
        run<Awaited<ReturnType<typeof exprWorkflow>>>('exprWorkflow', [
          'step.q.output.rows[0][1] == "first" && not approved',
          { approved: true, name: 'x' },
        ]),
        run<Awaited<ReturnType<typeof exprErrorWorkflow>>>('exprErrorWorkflow', [
          'step.skipped.output.num_rows > 1',
          {},
        ]),
      ]),
    );

    expect(pass).toEqual({
      result: true,
      sql: { text: 'SELECT * FROM users WHERE name = $1 AND visits > $2', params: ["O'Brien", 7] },
    });
    expect(fail.result).toBe(false);
    expect(fail.sql.params).toEqual(['x', 7]);
    expect(failure).toEqual({
      code: 'step_unavailable',
      position: 0,
      message: "step 'skipped' was skipped (its condition was false), so it has no output (column 1)",
    });
  });
});
