// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// Hostile input values pass through a query step as bound parameters: they come back verbatim and
// nothing they say is executed.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let env: WorkflowEnv;
let direct: postgres.Sql;
const table = `wf_victims_${Date.now().toString(36)}`;

beforeAll(async () => {
  env = await startWorkflowEnv();
  const pg = servers().postgres;
  direct = postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.database,
    max: 1,
  });
  await direct`create table ${direct(table)} (id serial primary key, v text)`;
});
afterAll(async () => {
  if (direct) {
    await direct`drop table if exists ${direct(table)}`;
    await direct.end();
  }
  await env?.stop();
});

const HOSTILE = [
  `'; drop table ${'TABLE'}; --`,
  `' or '1'='1`,
  `1; select pg_sleep(5)`,
  `$1`,
  `\\'; delete from ${'TABLE'} where true; --`,
  `"); drop table ${'TABLE'}; --`,
  `\u0000 nul byte`.replace('\u0000', ''),
  `' union select current_user --`,
];

describe('SQL injection through a query step', () => {
  let wf: WorkflowView;
  beforeAll(async () => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Insert a value',
      inputs: [{ key: 'value', description: 'anything', type: 'string' }],
      steps: [
        {
          name: 'ins',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `insert into ${table} (v) values (\${value}) returning v, (select count(*) from ${table})::int`,
          },
        },
        {
          name: 'echo',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query:
              'select ${step.ins.output.rows[0][0]} as same, ${value} = ${step.ins.output.rows[0][0]} as equal',
          },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    wf = res.body;
  });

  for (const template of HOSTILE) {
    it(`keeps ${JSON.stringify(template)} a value`, async () => {
      const value = template.replaceAll('TABLE', table);
      const started = Date.now();
      const run = await env.waitRun(wf.id, await runWorkflow(env, wf.id, { value }));
      expect(run.status, run.error ?? '').toBe('succeeded');
      const [ins, echo] = run.steps!;
      expect((ins!.output as { rows: unknown[][] }).rows[0]![0]).toBe(value);
      expect((echo!.output as { rows: unknown[][] }).rows[0]).toEqual([value, true]);
      expect(Date.now() - started).toBeLessThan(5000);
      const [row] = await direct<{ v: string }[]>`select v from ${direct(table)} order by id desc limit 1`;
      expect(row!.v).toBe(value);
    });
  }

  it('left the table and every row in place', async () => {
    const [row] = await direct<{ n: number }[]>`select count(*)::int as n from ${direct(table)}`;
    expect(row!.n).toBe(HOSTILE.length);
  });

  it('refuses a template that would splice a value into a string literal', async () => {
    const res = await env.api('POST', '/api/v1/workflows', {
      name: 'quoted',
      inputs: [{ key: 'value', description: '', type: 'string' }],
      steps: [
        {
          name: 'q',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: "select '${value}'" },
        },
      ],
    });
    // Rendering refuses it at run time at the latest; here the run fails without touching the database.
    if (res.status === 201) {
      const run = await env.waitRun(
        (res.body as unknown as WorkflowView).id,
        await runWorkflow(env, (res.body as unknown as WorkflowView).id, { value: "x'; drop table y; --" }),
      );
      expect(run.status).toBe('failed');
      expect(run.error).toMatch(/string literal|quoted/i);
    } else {
      expect(res.status).toBe(422);
    }
  });
});
