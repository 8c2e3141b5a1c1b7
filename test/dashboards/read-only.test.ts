// Dashboard panels only read (GovernedQuery.readOnly): whoever opens a dashboard
// runs its panels with their own access, so a panel that writes would write as every viewer. A
// write is refused at save (422 naming the field) and, should one be stored anyway (a row from
// before this rule), refused again at view time; a read that writes through a function runs in
// the engine's read-only mode and fails. Against the harness PostgreSQL and MariaDB.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateDashboard } from '../../store/dashboards.ts';
import { type Person, startWorld, type World } from '../governance/world.ts';
import { withMy, withPg } from '../helpers/targets.ts';

type Engine = 'postgres' | 'mariadb';
type Problem = { status: number; detail: string; errors?: Array<{ path: string; message: string }> };

let w: World;
let member: Person;
let admin: Person;
const suffix = randomBytes(4).toString('hex');
const sink = `sink_${suffix}`;
const people = `people_${suffix}`;
const writer = `write_sink_${suffix}`;
const credentials: Record<Engine, string> = { postgres: '', mariadb: '' };

beforeAll(async () => {
  w = await startWorld();
  member = await w.person('member', 'mia');
  admin = await w.person('admin', 'ada');
  await seed();
  for (const engine of ['postgres', 'mariadb'] as const)
    credentials[engine] = (await w.database(engine)).credentials[0]!.id;
});
afterAll(async () => {
  await w?.stop();
  await unseed();
});

/** `people` holds a secret, `sink` is empty, `write_sink()` inserts into `sink` from a SELECT. */
async function seed(): Promise<void> {
  await withPg(async (sql) => {
    await sql.unsafe(`create table ${people} (email text, ssn text)`);
    await sql.unsafe(`insert into ${people} values ('a@example.test', 'SSN-000011')`);
    await sql.unsafe(`create table ${sink} (v text)`);
    await sql.unsafe(
      `create function ${writer}() returns int language plpgsql as $$
         begin insert into ${sink} select email || ssn from ${people}; return 1; end $$`,
    );
  });
  await withMy(async (conn) => {
    await conn.query(`create table ${people} (email varchar(100), ssn varchar(100))`);
    await conn.query(`insert into ${people} values ('a@example.test', 'SSN-000011')`);
    await conn.query(`create table ${sink} (v varchar(200))`);
    await conn.query(
      `create function ${writer}() returns int modifies sql data
         begin insert into ${sink} select concat(email, ssn) from ${people}; return 1; end`,
    );
  });
}

async function unseed(): Promise<void> {
  await withPg((sql) =>
    sql.unsafe(`drop function if exists ${writer}(); drop table if exists ${sink}, ${people}`),
  );
  await withMy(async (conn) => {
    await conn.query(`drop function if exists ${writer}`);
    await conn.query(`drop table if exists ${sink}, ${people}`);
  });
}

/** Rows in the sink table on `engine`, read directly (not through the service). */
async function sinkRows(engine: Engine): Promise<unknown[]> {
  if (engine === 'postgres') return withPg((sql) => sql.unsafe(`select v from ${sink}`));
  return withMy(async (conn) => (await conn.query(`select v from ${sink}`))[0] as unknown[]);
}

const INSERT: Record<Engine, string> = {
  postgres: `insert into ${sink} select email || ssn from ${people} returning 1`,
  mariadb: `insert into ${sink} select concat(email, ssn) from ${people} returning 1`,
};

const panel = (engine: Engine, query: string) => ({
  title: 'Leak',
  details: { __type__: 'query', query, credential_id: credentials[engine] },
});

async function call<T>(who: Person, method: string, path: string, body?: unknown) {
  const res = await w.as(who, method, path, body);
  return { status: res.status, body: (await res.json()) as T };
}

async function readablePanel(engine: Engine, query: string) {
  const created = await call<{ id: string; panels: Array<{ id: string }> }>(
    member,
    'POST',
    '/v1/dashboards',
    { name: `ro-${engine}`, restricted_access: false, panels: [panel(engine, query)] },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { dashboardId: created.body.id, panelId: created.body.panels[0]!.id };
}

describe.each(['postgres', 'mariadb'] as const)('read-only panels on %s', (engine) => {
  it('refuses a panel that writes when it is saved, on create and on update (422 naming the field)', async () => {
    const created = await call<Problem>(member, 'POST', '/v1/dashboards', {
      name: 'Leak',
      restricted_access: false,
      panels: [panel(engine, INSERT[engine])],
    });
    expect(created.status).toBe(422);
    expect(created.body.errors).toContainEqual({
      path: 'panels.0.details.query',
      message: expect.stringMatching(/may only read/),
    });

    const { dashboardId } = await readablePanel(engine, `select email from ${people}`);
    const updated = await call<Problem>(member, 'PUT', `/v1/dashboards/${dashboardId}`, {
      panels: [panel(engine, 'select 1 as one'), panel(engine, INSERT[engine])],
    });
    expect(updated.status).toBe(422);
    expect(updated.body.errors?.map((e) => e.path)).toEqual(['panels.1.details.query']);
    const kept = await call<{ panels: Array<{ details: { query: string } }> }>(
      member,
      'GET',
      `/v1/dashboards/${dashboardId}`,
    );
    expect(kept.body.panels.map((p) => p.details.query)).toEqual([`select email from ${people}`]);
    expect(await sinkRows(engine)).toEqual([]);
  });

  it('refuses a stored panel that writes when an admin opens it, and the sink stays empty', async () => {
    const { dashboardId, panelId } = await readablePanel(engine, `select email from ${people}`);
    // A row saved before panels were checked: the statement is put in the store directly.
    const [row] = await w.svc.deps.sql<Array<{ name: string; restricted_access: boolean; panels: never }>>`
      select name, restricted_access, panels from dashboards where id = ${dashboardId}`;
    const panels = (row!.panels as Array<{ details: { query: string } }>).map((p) => ({
      ...p,
      details: { ...p.details, query: INSERT[engine] },
    }));
    await updateDashboard(w.svc.deps.sql, dashboardId, { ...row!, panels: panels as never });

    const ran = await call<Problem>(admin, 'POST', `/v1/dashboards/${dashboardId}/panels/${panelId}/run`, {});
    expect(ran.status).toBe(403);
    expect(ran.body.detail).toMatch(/may only read/);
    expect(await sinkRows(engine)).toEqual([]);
  });

  it('runs a read that writes through a function in read-only mode: it fails and changes nothing', async () => {
    const { dashboardId, panelId } = await readablePanel(engine, `select ${writer}() as n`);
    const ran = await call<Problem>(admin, 'POST', `/v1/dashboards/${dashboardId}/panels/${panelId}/run`, {});
    expect(ran.status).toBe(422);
    expect(ran.body.detail).toMatch(/read-only transaction|READ ONLY transaction/);
    expect(await sinkRows(engine)).toEqual([]);

    // The connection the failure left behind serves the next panel normally.
    const next = await readablePanel(engine, `select email from ${people}`);
    const ok = await call<{ status: string; result: { rows: unknown[][] } }>(
      admin,
      'POST',
      `/v1/dashboards/${next.dashboardId}/panels/${next.panelId}/run`,
      {},
    );
    expect(ok.body.result.rows).toEqual([['a@example.test']]);
  });
});
