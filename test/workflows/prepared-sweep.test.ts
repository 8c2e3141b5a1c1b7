// The sweep of prepared transactions that exactly-once write steps leave behind
// (automation/prepared-sweep.ts), against the harness PostgreSQL (prepared transactions) and MariaDB
// (XA), with databases registered through the API and the service's own pools. Each leftover is
// made for real: the adapter runs an UPDATE and leaves it prepared under the attempt's id, as an
// attempt does before its worker dies, and the ledger is brought to where the protocol
// (claimStep, decideCommit) would have left it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterPool, SessionControl } from '../../adapters/types.ts';
import { preparedSweep, startPreparedSweep } from '../../automation/prepared-sweep.ts';
import type { PoolSource } from '../../core/deps.ts';
import { poolFor } from '../../governance/connections.ts';
import { stepTagPrefix } from '../../governance/once.ts';
import { runGovernedQuery } from '../../governance/query.ts';
import { findCredentialAndDatabase } from '../../store/databases.ts';
import { newId } from '../../store/ids.ts';
import { claimStep, decideCommit, type StepLocation } from '../../store/step-commits.ts';
import { insertRun } from '../../store/workflow-runs.ts';
import { insertWorkflow } from '../../store/workflows.ts';
import { startWorld, type World } from '../governance/world.ts';
import { servers } from '../harness/servers.ts';
import { withMy, withPg } from '../helpers/targets.ts';

const TABLE = `sweep_${randomBytes(5).toString('hex')}`;
const ENGINES = ['postgres', 'mariadb'] as const;
type Engine = (typeof ENGINES)[number];

/** The leftovers each engine gets, one table row each. */
const CASES = ['earlier', 'recorded', 'recovered', 'fresh', 'old', 'raced', 'expired', 'unknown'] as const;
type Case = (typeof CASES)[number];
const ROW: Record<Case, number> = {
  earlier: 1,
  recorded: 2,
  recovered: 3,
  fresh: 4,
  old: 5,
  raced: 6,
  expired: 7,
  unknown: 8,
};
/** The row a write step through the governed pipeline changes. */
const PIPELINE_ROW = 9;
/** The row of the leftover the sweep `serve` starts settles. */
const MAINTENANCE_ROW = 10;

interface Leftover {
  runId: string;
  stepId: string;
  id: string;
}

interface Target {
  where: StepLocation;
  pool: AdapterPool;
  left: Record<Case, Leftover>;
  /** What attempt 1 of the `raced` step got from decideCommit, tried just before the sweep's rollback. */
  racedDecision: boolean | null;
  /** Steps with no prepared transaction left: past KEEP_DAYS with a location, and without one. */
  done: { located: Leftover; legacy: Leftover };
  /** Whether the `expired` row outlived the purge a later claim runs (its transaction still listed). */
  expiredKept: boolean;
}

let world: World;
let workflowId: string;
const targets = {} as Record<Engine, Target>;
const logsBefore = { n: 0 };

/** The row's note, read by the test's own superuser connection. */
async function note(engine: Engine, row: number): Promise<string> {
  if (engine === 'postgres')
    return withPg(
      async (sql) => (await sql`select note from ${sql(TABLE)} where id = ${row}`)[0]!.note as string,
    );
  return withMy(async (conn) => {
    const [rows] = await conn.query(`select note from \`${TABLE}\` where id = ?`, [row]);
    return (rows as { note: string }[])[0]!.note;
  });
}

/**
 * Whether another session can update the row within a second: false while a prepared
 * transaction still holds its lock.
 */
async function lockFree(engine: Engine, row: number): Promise<boolean> {
  try {
    if (engine === 'postgres')
      await withPg(async (sql) => {
        await sql`set lock_timeout = '1s'`;
        await sql`update ${sql(TABLE)} set touched = touched + 1 where id = ${row}`;
      });
    else
      await withMy(async (conn) => {
        await conn.query('set innodb_lock_wait_timeout = 1');
        await conn.query(`update \`${TABLE}\` set touched = touched + 1 where id = ?`, [row]);
      });
    return true;
  } catch (err) {
    if (/lock/i.test(String((err as Error).message))) return false;
    throw err;
  }
}

async function newStep(orgId: string): Promise<{ runId: string; stepId: string }> {
  const runId = newId('run');
  await insertRun(
    world.svc.deps.sql,
    {
      id: runId,
      workflow_id: workflowId,
      org_id: orgId,
      trigger: 'api',
      initiator_user_id: null,
      initiator_api_key_id: null,
      inputs: {},
    },
    {} as never,
  );
  return { runId, stepId: newId('wfs') };
}

/** Attempt `attempt` of the step runs its UPDATE and leaves it prepared, as before its worker died. */
async function prepare(t: Target, step: { runId: string; stepId: string }, attempt: number, row: number) {
  const id = `${stepTagPrefix(step)}${attempt}`;
  await t.pool.execute(`update ${TABLE} set note = 'attempt ${attempt}' where id = ${row}`, [], {
    maxRows: 10,
    timeoutSeconds: 10,
    tag: id,
    prepareAs: id,
  });
  return id;
}

/** The service's pools, but the `raced` step's attempt 1 tries to record its commit just before the sweep settles it. */
function racingPools(real: PoolSource): PoolSource {
  return {
    invalidate: (databaseId) => real.invalidate(databaseId),
    closeAll: () => real.closeAll(),
    acquire: (key, config) => {
      const pool = real.acquire(key, config);
      const sessions = pool.sessions!;
      const engine = ENGINES.find((e) => targets[e].where.credentialId === key.credentialId);
      const finish: SessionControl['finish'] = async (id, commit) => {
        const t = engine && targets[engine];
        if (t && id === t.left.raced.id)
          t.racedDecision = await decideCommit(
            world.svc.deps.sql,
            { ...t.left.raced, attempt: 1 },
            { command: 'UPDATE', rows: [] },
          );
        return sessions.finish(id, commit);
      };
      return { ...pool, sessions: { ...sessions, finish } } as AdapterPool;
    },
  };
}

beforeAll(async () => {
  world = await startWorld();
  const { sql } = world.svc.deps;
  await withPg(async (pg) => {
    await pg`create table ${pg(TABLE)} (id int primary key, note text not null, touched int not null default 0)`;
    for (const row of [...Object.values(ROW), PIPELINE_ROW, MAINTENANCE_ROW])
      await pg`insert into ${pg(TABLE)} (id, note) values (${row}, 'before')`;
  });
  await withMy(async (conn) => {
    await conn.query(
      `create table \`${TABLE}\` (id int primary key, note varchar(40) not null, touched int not null default 0)`,
    );
    for (const row of [...Object.values(ROW), PIPELINE_ROW, MAINTENANCE_ROW])
      await conn.query(`insert into \`${TABLE}\` (id, note) values (?, 'before')`, [row]);
  });
  workflowId = newId('wf');
  await insertWorkflow(sql, workflowId, world.orgId, {
    name: 'sweep',
    group_name: null,
    cron_schedule: null,
    tracker_label_id: null,
    tracker_label_name: null,
    inputs: [],
    steps: [],
    run_permissions: [],
  });

  for (const engine of ENGINES) {
    const db = await world.database(engine);
    const credentialId = db.credentials[0]!.id;
    const found = (await findCredentialAndDatabase(sql, world.orgId, credentialId))!;
    const t: Target = {
      where: { databaseId: db.id, credentialId },
      pool: poolFor(world.svc.deps, found.db, found.cred),
      left: {} as Record<Case, Leftover>,
      racedDecision: null,
      done: {} as Target['done'],
      expiredKept: false,
    };
    targets[engine] = t;
    const at = (step: { runId: string; stepId: string }, attempt: number) => ({ ...step, attempt });

    // Attempt 1 prepared after attempt 2 had claimed the step, and died before rolling back.
    const earlier = await newStep(world.orgId);
    await claimStep(sql, at(earlier, 1), t.where);
    await claimStep(sql, at(earlier, 2), t.where);
    t.left.earlier = { ...earlier, id: await prepare(t, earlier, 1, ROW.earlier) };

    // Attempt 1 recorded its commit and died before COMMIT PREPARED; no attempt followed.
    const recorded = await newStep(world.orgId);
    await claimStep(sql, at(recorded, 1), t.where);
    t.left.recorded = { ...recorded, id: await prepare(t, recorded, 1, ROW.recorded) };
    expect(await decideCommit(sql, at(recorded, 1), { command: 'UPDATE' })).toBe(true);

    // Attempt 1 holds the claim and has prepared: it may still be about to decide.
    const fresh = await newStep(world.orgId);
    await claimStep(sql, at(fresh, 1), t.where);
    t.left.fresh = { ...fresh, id: await prepare(t, fresh, 1, ROW.fresh) };

    // The same, but the ledger row is older than any attempt can run.
    for (const c of ['old', 'raced'] as const) {
      const step = await newStep(world.orgId);
      await claimStep(sql, at(step, 1), t.where);
      t.left[c] = { ...step, id: await prepare(t, step, 1, ROW[c]) };
      await sql`
        update query_step_commits set updated_at = now() - interval '26 hours'
         where run_id = ${step.runId} and step_id = ${step.stepId}`;
    }

    // Attempt 1 recorded its commit; attempt 2 claimed, found it, and died before committing it.
    const recovered = await newStep(world.orgId);
    await claimStep(sql, at(recovered, 1), t.where);
    t.left.recovered = { ...recovered, id: await prepare(t, recovered, 1, ROW.recovered) };
    expect(await decideCommit(sql, at(recovered, 1), { command: 'UPDATE' })).toBe(true);
    await claimStep(sql, at(recovered, 2), t.where);

    // Past KEEP_DAYS and still prepared (its target unreachable until now): the purge any later
    // claim runs must keep its row, or nothing would ever settle it.
    const expired = await newStep(world.orgId);
    await claimStep(sql, at(expired, 1), t.where);
    t.left.expired = { ...expired, id: await prepare(t, expired, 1, ROW.expired) };
    // Past KEEP_DAYS with nothing prepared: one with a location, one from before locations.
    const located = await newStep(world.orgId);
    await claimStep(sql, at(located, 1), t.where);
    await decideCommit(sql, at(located, 1), {});
    const legacy = await newStep(world.orgId);
    await claimStep(sql, at(legacy, 1));
    t.done = { located: { ...located, id: '' }, legacy: { ...legacy, id: '' } };
    for (const old of [expired, located, legacy])
      await sql`
        update query_step_commits set updated_at = now() - interval '4 days'
         where run_id = ${old.runId} and step_id = ${old.stepId}`;
    await claimStep(sql, at(await newStep(world.orgId), 1), t.where);
    t.expiredKept = (await ledger(t.left.expired)) !== undefined;

    // Named like a step attempt, but no ledger row knows it.
    const unknown = { runId: newId('run'), stepId: newId('wfs') };
    t.left.unknown = { ...unknown, id: await prepare(t, unknown, 1, ROW.unknown) };
  }

  logsBefore.n = world.svc.logs.length;
  const sweep = preparedSweep({ ...world.svc.deps, pools: racingPools(world.svc.deps.pools) });
  await sweep();
  // A second pass, as the next minute's (or another replica's): settling twice is harmless.
  await sweep();
}, 120_000);

afterAll(async () => {
  for (const engine of ENGINES) {
    const t = targets[engine];
    if (!t) continue;
    for (const left of Object.values(t.left ?? {})) await t.pool.sessions!.finish(left.id, false);
  }
  await withPg((pg) => pg`drop table if exists ${pg(TABLE)}`);
  await withMy((conn) => conn.query(`drop table if exists \`${TABLE}\``));
  await world?.stop();
});

async function listed(engine: Engine, c: Case): Promise<boolean> {
  const t = targets[engine];
  return (await t.pool.sessions!.prepared(t.left[c].id)).includes(t.left[c].id);
}

/** Rolled back: no longer listed, its row as before the write, and its lock released. */
async function expectRolledBack(engine: Engine, c: Case): Promise<void> {
  expect(await listed(engine, c)).toBe(false);
  expect(await note(engine, ROW[c])).toBe('before');
  expect(await lockFree(engine, ROW[c])).toBe(true);
}

async function ledger(left: Leftover) {
  const [row] = await world.svc.deps.sql<{ claimed_attempt: number; committed_attempt: number | null }[]>`
    select claimed_attempt, committed_attempt from query_step_commits
     where run_id = ${left.runId} and step_id = ${left.stepId}`;
  return row;
}

async function settledEvents(left: Leftover) {
  return world.svc.deps.sql<{ subject: Record<string, unknown>; actor_kind: string; database_id: string }[]>`
    select subject, actor_kind, database_id from audit_log
     where event = 'run.write_settled' and subject->>'run_id' = ${left.runId}`;
}

describe.each(ENGINES)('the prepared-transaction sweep on %s', (engine) => {
  it('rolls back an earlier attempt’s transaction, releasing its lock', async () => {
    const t = targets[engine];
    await expectRolledBack(engine, 'earlier');
    const events = await settledEvents(t.left.earlier);
    expect(events.map((e) => e.subject)).toEqual([
      expect.objectContaining({
        attempt: 1,
        settled: 'rolled_back',
        reason: 'superseded',
        workflow_id: workflowId,
      }),
    ]);
    expect(events[0]).toMatchObject({ actor_kind: 'workflow_run', database_id: t.where.databaseId });
  });

  it('commits the transaction whose commit the ledger records', async () => {
    const t = targets[engine];
    expect(await listed(engine, 'recorded')).toBe(false);
    expect(await note(engine, ROW.recorded)).toBe('attempt 1');
    expect(await lockFree(engine, ROW.recorded)).toBe(true);
    expect((await settledEvents(t.left.recorded)).map((e) => e.subject)).toEqual([
      expect.objectContaining({ attempt: 1, settled: 'committed', reason: 'recorded_commit' }),
    ]);
  });

  it('commits a recorded commit although a later attempt claimed the step', async () => {
    const t = targets[engine];
    expect(await listed(engine, 'recovered')).toBe(false);
    expect(await note(engine, ROW.recovered)).toBe('attempt 1');
    expect((await settledEvents(t.left.recovered)).map((e) => e.subject)).toEqual([
      expect.objectContaining({ attempt: 1, settled: 'committed', reason: 'recorded_commit' }),
    ]);
  });

  it('keeps a row past KEEP_DAYS while its transaction is listed, and settles it', async () => {
    const t = targets[engine];
    expect(t.expiredKept).toBe(true);
    await expectRolledBack(engine, 'expired');
  });

  it('purges rows past KEEP_DAYS once nothing of theirs is listed', async () => {
    const t = targets[engine];
    // Through the sweep (its target listed nothing of it), and through any claim (no location).
    expect(await ledger(t.done.located)).toBeUndefined();
    expect(await ledger(t.done.legacy)).toBeUndefined();
  });

  it('leaves the claimed attempt’s transaction alone while its ledger row is fresh', async () => {
    const t = targets[engine];
    expect(await listed(engine, 'fresh')).toBe(true);
    expect(await lockFree(engine, ROW.fresh)).toBe(false);
    expect(await ledger(t.left.fresh)).toEqual({ claimed_attempt: 1, committed_attempt: null });
    expect(await settledEvents(t.left.fresh)).toEqual([]);
  });

  it('takes the claim of an abandoned attempt, then rolls its transaction back', async () => {
    const t = targets[engine];
    await expectRolledBack(engine, 'old');
    expect(await ledger(t.left.old)).toEqual({ claimed_attempt: 2, committed_attempt: null });
    // The attempt, were it alive, can no longer record a commit of what was rolled back.
    expect(await decideCommit(world.svc.deps.sql, { ...t.left.old, attempt: 1 }, {})).toBe(false);
    expect((await settledEvents(t.left.old)).map((e) => e.subject)).toEqual([
      expect.objectContaining({ attempt: 1, settled: 'rolled_back', reason: 'abandoned' }),
    ]);
  });

  it('has taken the claim before it rolls back: the attempt recording its commit in between fails', async () => {
    const t = targets[engine];
    expect(t.racedDecision).toBe(false);
    expect(await listed(engine, 'raced')).toBe(false);
    expect(await note(engine, ROW.raced)).toBe('before');
    expect(await ledger(t.left.raced)).toEqual({ claimed_attempt: 2, committed_attempt: null });
  });

  it('never touches an id no ledger row knows, and warns of it once without secrets', async () => {
    const t = targets[engine];
    expect(await listed(engine, 'unknown')).toBe(true);
    expect(await note(engine, ROW.unknown)).toBe('before');
    const lines = world.svc.logs.slice(logsBefore.n);
    expect(lines.filter((l) => l.includes(t.left.unknown.id) && l.includes('matches no step'))).toHaveLength(
      1,
    );
    const password = servers()[engine].password;
    expect(password.length).toBeGreaterThan(3);
    expect(lines.filter((l) => l.includes(password))).toEqual([]);
  });
});

describe('a write step through the governed pipeline', () => {
  it.each(ENGINES)('records the database and credential it runs on (%s), for the sweep', async (engine) => {
    const t = targets[engine];
    const step = await newStep(world.orgId);
    const outcome = await runGovernedQuery(world.svc.deps, {
      orgId: world.orgId,
      actor: { kind: 'workflow_run', runId: step.runId, workflowId },
      origin: 'workflow',
      databaseId: t.where.databaseId,
      credentialId: t.where.credentialId,
      statement: `update ${TABLE} set note = 'pipeline' where id = ${PIPELINE_ROW}`,
      params: [],
      stepAttempt: { ...step, attempt: 1 },
    });
    expect(outcome.delivery).toBe('exactly_once');
    const [row] = await world.svc.deps.sql`
      select database_id, credential_id, claimed_attempt, committed_attempt from query_step_commits
       where run_id = ${step.runId} and step_id = ${step.stepId}`;
    expect(row).toEqual({
      database_id: t.where.databaseId,
      credential_id: t.where.credentialId,
      claimed_attempt: 1,
      committed_attempt: 1,
    });
  });
});

describe('the periodic sweep', () => {
  it('runs the sweep: an earlier attempt’s leftover is rolled back without anyone asking', async () => {
    const t = targets.postgres;
    const { sql } = world.svc.deps;
    const step = await newStep(world.orgId);
    await claimStep(sql, { ...step, attempt: 1 }, t.where);
    await claimStep(sql, { ...step, attempt: 2 }, t.where);
    const id = await prepare(t, step, 1, MAINTENANCE_ROW);
    const stop = startPreparedSweep(world.svc.deps);
    try {
      const deadline = Date.now() + 20_000;
      while ((await t.pool.sessions!.prepared(id)).length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      stop();
    }
    expect(await t.pool.sessions!.prepared(id)).toEqual([]);
    expect(await note('postgres', MAINTENANCE_ROW)).toBe('before');
    expect(await lockFree('postgres', MAINTENANCE_ROW)).toBe(true);
  });
});
