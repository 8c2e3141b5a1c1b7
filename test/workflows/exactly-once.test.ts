// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// Exactly-once query steps (workflows/README.md "Exactly-once query steps"): a write step whose
// worker is SIGKILLed mid-statement commits exactly once on targets with two-phase commit
// (PostgreSQL with max_prepared_transactions > 0, MariaDB XA), and a statement that runs longer
// than the old 30 + 10 s activity timeout under its credential's timeout is not started again.
// Workers are separate processes (worker-child.ts); the proof is the target tables' rows.
import type { ChildProcess } from 'node:child_process';
import proto from '@temporalio/proto';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../store/ids.ts';
import { servers } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';
import { killWorker, startWorkerProcess } from './worker-child.ts';

const { EventType } = proto.temporal.api.enums.v1;
const RUNS = 20;
const SUFFIX = newId('db').slice(-8).toLowerCase();
const PG_TABLE = `once_pg_${SUFFIX}`;
const MY_TABLE = `once_my_${SUFFIX}`;

let env: WorkflowEnv;
let pg: postgres.Sql;
let maria: mysql.Connection;
const children: ChildProcess[] = [];
/** Credentials: the Postgres target with a 120 s timeout, and MariaDB. */
const creds = { pgSlow: '', maria: '' };

beforeAll(async () => {
  const p = servers().postgres;
  pg = postgres({ ...p, username: p.user, max: 2, onnotice: () => {} });
  await pg.unsafe(`create table ${PG_TABLE} (id serial primary key, note text not null)`);
  const m = servers().mariadb;
  maria = await mysql.createConnection({
    host: m.host,
    port: m.port,
    user: m.user,
    password: m.password,
    database: m.database,
  });
  await maria.query(
    `create table ${MY_TABLE} (id int auto_increment primary key, note varchar(64) not null)`,
  );
  env = await startWorkflowEnv({ worker: false });
  const register = async (body: Record<string, unknown>) => {
    const res = await env.api<{ credentials: Array<{ id: string }> }>('POST', '/api/v1/desk/databases', body);
    if (res.status !== 201) throw new Error(`registration failed: ${JSON.stringify(res.body)}`);
    return res.body.credentials[0]!.id;
  };
  creds.pgSlow = await register({
    name: 'orders-slow',
    adapter: 'postgres',
    hostname: p.host,
    port: p.port,
    database: p.database,
    credentials: [
      { username: p.user, password: p.password, reviews_required: 0, default_credential: true, timeout: 120 },
    ],
  });
  creds.maria = await register({
    name: 'shop',
    adapter: 'mysql',
    hostname: m.host,
    port: m.port,
    database: m.database,
    credentials: [{ username: m.user, password: m.password, reviews_required: 0, default_credential: true }],
  });
});
afterAll(async () => {
  for (const child of children) await killWorker(child);
  await env?.stop();
  // A transaction left prepared holds its locks: the drops below would wait on it. It is rolled back
  // so they can run, and then named as the failure it is.
  const left = await leftPrepared();
  for (const id of left.pg) await pg.unsafe(`rollback prepared '${id}'`).catch(() => {});
  for (const id of left.maria) await maria.query(`XA ROLLBACK '${id}'`).catch(() => {});
  await pg?.unsafe(`drop table if exists ${PG_TABLE}`);
  await pg?.end();
  await maria?.query(`drop table if exists ${MY_TABLE}`);
  await maria?.end();
  if (left.pg.length + left.maria.length > 0)
    throw new Error(`runs of this file left prepared transactions behind: ${JSON.stringify(left)}`);
});

/** Ids of this file's runs: every prepared transaction of theirs is named `cs:<run ULID>:…`. */
const runsStarted: string[] = [];

/** Prepared transactions of this file's runs still on the targets: none may outlive its run. */
async function leftPrepared(): Promise<{ pg: string[]; maria: string[] }> {
  const ours = (id: string) =>
    runsStarted.some((run) => id.startsWith(`cs:${run.slice(run.indexOf('_') + 1)}:`));
  const pgIds = pg ? (await pg.unsafe('select gid from pg_prepared_xacts')).map((r) => String(r.gid)) : [];
  // XA RECOVER: data holds gtrid then bqual; ours have no bqual.
  const [xa] = maria ? await maria.query<mysql.RowDataPacket[]>('XA RECOVER') : [[]];
  const mariaIds = (xa as mysql.RowDataPacket[]).map((r) => String(r.data).slice(0, Number(r.gtrid_length)));
  return { pg: pgIds.filter(ours), maria: mariaIds.filter(ours) };
}

interface Target {
  name: string;
  credentialId: () => string;
  /** An INSERT of the `note` input that takes about 1.5 s. */
  insert: string;
  /** Statements of that INSERT running on the server now. */
  inFlight: () => Promise<number>;
  /** Rows per note. */
  rows: () => Promise<Map<string, number>>;
}

const targets: Target[] = [
  {
    name: 'PostgreSQL with prepared transactions',
    credentialId: () => env.db.credentialId,
    insert: `insert into ${PG_TABLE} (note) select \${note} from pg_sleep(1.5)`,
    inFlight: async () =>
      (
        await pg.unsafe(
          `select count(*)::int as n from pg_stat_activity where state = 'active' and query like 'insert into ${PG_TABLE}%'`,
        )
      )[0]!.n as number,
    rows: async () =>
      new Map(
        (await pg.unsafe(`select note, count(*)::int as n from ${PG_TABLE} group by note`)).map((r) => [
          r.note as string,
          r.n as number,
        ]),
      ),
  },
  {
    name: 'MariaDB with XA',
    credentialId: () => creds.maria,
    insert: `insert into ${MY_TABLE} (note) select \${note} from (select sleep(1.5)) as s`,
    inFlight: async () => {
      const [rows] = await maria.query<mysql.RowDataPacket[]>(
        `select count(*) as n from information_schema.PROCESSLIST
          where INFO like '%insert into ${MY_TABLE}%' and ID <> CONNECTION_ID()`,
      );
      return Number(rows[0]!.n);
    },
    rows: async () => {
      const [rows] = await maria.query<mysql.RowDataPacket[]>(
        `select note, count(*) as n from ${MY_TABLE} group by note`,
      );
      return new Map(rows.map((r) => [String(r.note), Number(r.n)]));
    },
  },
];

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(targets)('a worker killed mid-statement ($name)', (target) => {
  it(`commits the write of each of ${RUNS} runs exactly once`, async () => {
    const path = `/slow-${newId('run').slice(-6)}`;
    env.receiver.on(path, () => ({ status: 200, body: { ok: true }, delayMs: 1000 }));
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: `Insert then call (${target.name})`,
      inputs: [{ key: 'note', description: 'What to record', type: 'string' }],
      steps: [
        {
          name: 'mark',
          // A short timeout of its own, which would make a read a local activity: a write step
          // never is one, so a worker's death cannot replay it with its whole workflow task.
          action: {
            __type__: 'query',
            credential_id: target.credentialId(),
            query: target.insert,
            timeout_seconds: 5,
          },
        },
        { name: 'call', action: { __type__: 'api', endpoint: `${env.receiver.url}${path}` } },
      ],
    });
    expect(created.status).toBe(201);
    const wf = created.body;

    const first = await startWorkerProcess(env, children);
    const notes = Array.from({ length: RUNS }, (_, i) => `${SUFFIX}-${target.name.slice(0, 2)}-${i}`);
    const runIds: string[] = [];
    for (const note of notes) {
      runIds.push(await runWorkflow(env, wf.id, { note }));
      runsStarted.push(runIds.at(-1)!);
      await new Promise((r) => setTimeout(r, 100));
    }
    // SIGKILL while several INSERTs are running on the server.
    await until(async () => (await target.inFlight()) >= 3, 20_000, 'statements in flight');
    await killWorker(first);
    await startWorkerProcess(env, children);

    for (const runId of runIds) {
      const run = await env.waitRun(wf.id, runId, undefined, 120_000);
      expect(run.status, run.error ?? '').toBe('succeeded');
    }
    // Every run succeeded: none of its attempts may still hold a prepared transaction. An attempt
    // that Temporal gave up on may still be rolling its own back, so a few seconds are allowed.
    let left = await leftPrepared();
    for (let i = 0; i < 50 && left.pg.length + left.maria.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      left = await leftPrepared();
    }
    expect(left, 'prepared transactions left by succeeded runs').toEqual({ pg: [], maria: [] });
    const rows = await target.rows();
    expect(notes.map((n) => rows.get(n) ?? 0)).toEqual(notes.map(() => 1));
    for (const child of children.splice(0)) await killWorker(child);
  }, 240_000);
});

describe('a statement longer than 30 + 10 s under its credential timeout of 120 s', () => {
  it('is started once, commits one row and the run succeeds', async () => {
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Long insert',
      steps: [
        {
          name: 'slow_insert',
          action: {
            __type__: 'query',
            credential_id: creds.pgSlow,
            // No timeout of its own: the credential's 120 s applies.
            query: `insert into ${PG_TABLE} (note) select 'long-${SUFFIX}' from pg_sleep(42)`,
          },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await startWorkerProcess(env, children);
    const runId = await runWorkflow(env, created.body.id);
    const run = await env.waitRun(created.body.id, runId, undefined, 150_000);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.steps![0]!.output).toMatchObject({ command: 'INSERT', num_rows: 1 });
    const rows = await pg.unsafe(`select count(*)::int as n from ${PG_TABLE} where note = 'long-${SUFFIX}'`);
    expect(rows[0]!.n).toBe(1);
    for (const child of children.splice(0)) await killWorker(child);
  }, 180_000);
});

describe('where and how long a query step runs', () => {
  it('follows the timeout it runs under, heartbeats, and runs writes only as regular activities', async () => {
    const query = (name: string, credentialId: string, sql: string, timeout: number | null) => ({
      name,
      action: { __type__: 'query', credential_id: credentialId, query: sql, timeout_seconds: timeout },
    });
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Placement',
      steps: [
        query('write', env.db.credentialId, `insert into ${PG_TABLE} (note) values ('placed-${SUFFIX}')`, 2),
        query('under_credential', creds.pgSlow, 'select 1 as one', null),
        query('short_read', env.db.credentialId, 'select 2 as two', 3),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await startWorkerProcess(env, children);
    const runId = await runWorkflow(env, created.body.id);
    const run = await env.waitRun(created.body.id, runId, undefined, 60_000);
    expect(run.status, run.error ?? '').toBe('succeeded');
    const history = await env.svc.deps.temporal!.client.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((e) => e.activityTaskScheduledEventAttributes!)
      .filter((a) => a.activityType?.name === 'runQueryStep')
      .map((a) => ({
        startToClose: Number(a.startToCloseTimeout?.seconds ?? 0),
        heartbeat: Number(a.heartbeatTimeout?.seconds ?? 0),
      }));
    // The write despite its short timeout, and the read under the credential's 120 s; the short
    // read ran locally. Each attempt may take the statement's timeout plus room, and heartbeats.
    expect(scheduled).toEqual([
      { startToClose: 2 + 15, heartbeat: 5 },
      { startToClose: 120 + 15, heartbeat: 5 },
    ]);
    for (const child of children.splice(0)) await killWorker(child);
  }, 90_000);
});
