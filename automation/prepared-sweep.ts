// The periodic sweep of prepared transactions that exactly-once write steps (once.ts) leave on a
// target when an attempt dies at the wrong moment: an abandoned earlier attempt that prepared
// after the winner finished and died before rolling itself back, or a recorded commit whose
// COMMIT PREPARED never ran because no later attempt came to settle it (the run was terminated).
// Either holds its row locks on the user's database until someone settles it. The sweep settles
// only what the ledger makes safe, and every replica may run it at once: a second COMMIT or
// ROLLBACK PREPARED of the same id finds it settled (SessionControl.finish answers false).
// `serve` (and `dev`) run it every minute beside the maintenance sweeps (cli/main.ts).
import type { SessionControl } from '../adapters/types.ts';
import { recordEvent } from '../audit/events.ts';
import { poolFor } from '../governance/connections.ts';
import { stepTagPrefix } from '../governance/once.ts';
import type { GovernanceDeps } from '../governance/types.ts';
import { findCredential, findDatabase } from '../store/databases.ts';
import {
  type LedgerRow,
  ledgerRows,
  purgeSettled,
  type SweptLocation,
  sweptLocations,
  takeAbandonedClaim,
} from '../store/step-commits.ts';

/**
 * A claimed attempt whose ledger row is untouched this long has ended: a step's timeout and its
 * credential's are at most 86 400 s (automation/schema.ts, registry/database-input.ts), an
 * attempt gets a few seconds beyond it, and every claim or decision touches the row. One hour of
 * margin over a day, and far inside the ledger's KEEP_DAYS (store/step-commits.ts).
 */
export const ABANDONED_HOURS = 25;

/** Every prepared transaction of a step attempt starts with it (stepTagPrefix). */
const TAG_ROOT = 'cs:';

/** How many unknown ids a process remembers having warned about (each is warned of once). */
const WARNED_MAX = 10_000;

export type SettleReason = 'recorded_commit' | 'superseded' | 'abandoned';
type Plan = { commit: boolean; reason: SettleReason } | null;

type SweepDeps = Pick<GovernanceDeps, 'sql' | 'logger' | 'pools' | 'keyring'>;

/** What the protocol makes safe for attempt `attempt`'s prepared transaction; null: leave it. */
export function planFor(
  row: Pick<LedgerRow, 'claimed_attempt' | 'committed_attempt' | 'abandoned'>,
  attempt: number,
): Plan {
  if (row.committed_attempt === attempt) return { commit: true, reason: 'recorded_commit' };
  // decideCommit needs claimed_attempt = attempt and no commit yet; the claim only grows and a
  // recorded commit stays, so this attempt can never record one.
  if (row.committed_attempt !== null || attempt < row.claimed_attempt)
    return { commit: false, reason: 'superseded' };
  // The claimed attempt itself, undecided: it may still be running and about to record its commit.
  if (attempt === row.claimed_attempt && row.abandoned) return { commit: false, reason: 'abandoned' };
  return null;
}

/**
 * The sweep, with what it remembers between runs (unknown ids already warned about). Runs that
 * would overlap (a slow target) are skipped. Returns how many transactions this run settled.
 */
export function preparedSweep(deps: SweepDeps): () => Promise<number> {
  const warned: Memory = { unknown: new Set(), unreachable: new Set() };
  let running = false;
  return async () => {
    if (running) return 0;
    running = true;
    try {
      return await sweepOnce(deps, warned);
    } finally {
      running = false;
    }
  };
}

/** What a process has warned about: unknown ids, and locations it could not list (until it can). */
interface Memory {
  unknown: Set<string>;
  unreachable: Set<string>;
}

interface Listing {
  loc: SweptLocation;
  control: SessionControl;
  ids: string[];
}

async function sweepOnce(deps: SweepDeps, warned: Memory): Promise<number> {
  const locations = await sweptLocations(deps.sql);
  if (locations.length === 0) return 0;
  const listings: Listing[] = [];
  for (const loc of locations) {
    const where = `${loc.databaseId}\u0000${loc.credentialId}`;
    try {
      const control = await controlOf(deps, loc);
      listings.push({ loc, control, ids: await control.prepared(TAG_ROOT) });
      warned.unreachable.delete(where);
    } catch (err) {
      // Its rows stay until it can be listed: each minute tries again, the log says it once.
      if (warned.unreachable.has(where)) continue;
      warned.unreachable.add(where);
      deps.logger.warn(
        { database_id: loc.databaseId, credential_id: loc.credentialId, err: messageOf(err) },
        'could not list the prepared transactions of workflow write steps',
      );
    }
  }
  // Read after listing: an attempt claims before it prepares, so every id listed has its row by
  // now (unless purged), and each rule planFor applies stays true once it holds.
  const rows = new Map<string, LedgerRow>();
  const anyListed = listings.some((l) => l.ids.length > 0);
  for (const row of anyListed ? await ledgerRows(deps.sql, ABANDONED_HOURS) : [])
    rows.set(stepTagPrefix({ runId: row.run_id, stepId: row.step_id }), row);
  let settled = 0;
  for (const { loc, control, ids } of listings) {
    const listed: { runId: string; stepId: string }[] = [];
    for (const id of ids) {
      const cut = id.lastIndexOf(':') + 1;
      const row = rows.get(id.slice(0, cut));
      const attempt = Number(id.slice(cut));
      if (!row) {
        warnUnknown(deps, warned.unknown, loc, id);
        continue;
      }
      listed.push({ runId: row.run_id, stepId: row.step_id });
      // Another credential of the same server lists it too; its own location's listing settles it.
      if (row.database_id !== loc.databaseId || row.credential_id !== loc.credentialId) continue;
      if (!Number.isSafeInteger(attempt) || attempt < 1) continue;
      try {
        if (await settle(deps, loc, control, row, id, attempt)) settled++;
      } catch (err) {
        deps.logger.warn(
          {
            database_id: loc.databaseId,
            run_id: row.run_id,
            step_id: row.step_id,
            attempt,
            err: messageOf(err),
          },
          'could not settle a prepared transaction of a workflow write step',
        );
      }
    }
    await purgeSettled(deps.sql, loc, listed);
  }
  return settled;
}

/** Settles one listed transaction as planFor allows; true when this call settled it. */
async function settle(
  deps: SweepDeps,
  loc: SweptLocation,
  control: SessionControl,
  row: LedgerRow,
  id: string,
  attempt: number,
): Promise<boolean> {
  let plan = planFor(row, attempt);
  if (!plan) return false;
  const key = { runId: row.run_id, stepId: row.step_id, attempt };
  if (plan.reason === 'abandoned') {
    // The claim first, the rollback after. Once the claim is past `attempt`, decideCommit for it
    // fails, so that attempt — were it somehow alive — rolls back and fails instead of recording a
    // commit. Rolled back first, it could still record "attempt commits" after the rollback: the
    // ledger would then say the write happened, the step would return its output, and a next
    // attempt would "recover" a write the database never kept.
    const after = await takeAbandonedClaim(deps.sql, key, ABANDONED_HOURS);
    if (!after) return false; // touched since it was read: the next sweep looks again
    // Recorded between the read and the claim: the decision stands.
    if (after.committed_attempt === attempt) plan = { commit: true, reason: 'recorded_commit' };
  }
  // False: another replica, or the step's own next attempt, settled it first.
  if (!(await control.finish(id, plan.commit))) return false;
  const settled = plan.commit ? 'committed' : 'rolled_back';
  deps.logger.warn(
    {
      database_id: loc.databaseId,
      credential_id: loc.credentialId,
      run_id: row.run_id,
      step_id: row.step_id,
      attempt,
      settled,
      reason: plan.reason,
    },
    'settled a prepared transaction left by a workflow write step',
  );
  // A run no longer stored (its organization deleted) has no chain to write to.
  if (row.workflow_id)
    await recordEvent(deps.sql, {
      orgId: loc.orgId,
      actor: { kind: 'workflow_run', runId: row.run_id, workflowId: row.workflow_id },
      origin: 'workflow',
      event: 'run.write_settled',
      subject: {
        workflow_id: row.workflow_id,
        run_id: row.run_id,
        step_id: row.step_id,
        attempt,
        settled,
        reason: plan.reason,
      },
      databaseId: loc.databaseId,
      outcome: 'allowed',
      detail: `${plan.commit ? 'committed' : 'rolled back'} the prepared write of attempt ${attempt} of step ${row.step_id}: ${REASONS[plan.reason]}`,
    });
  return true;
}

const REASONS: Record<SettleReason, string> = {
  recorded_commit: 'the ledger records its commit',
  superseded: 'a later attempt claimed the step',
  abandoned: `its attempt was abandoned (unchanged for ${ABANDONED_HOURS} h)`,
};

/**
 * The session control of a location's pool. A pool without one (a database moved behind an agent
 * since) lists nothing: nothing there can be settled through Countersign, and its rows are purged.
 */
async function controlOf(deps: SweepDeps, loc: SweptLocation): Promise<SessionControl> {
  const db = await findDatabase(deps.sql, loc.orgId, loc.databaseId);
  const cred = db && (await findCredential(deps.sql, db.id, loc.credentialId));
  const control = db && cred ? poolFor(deps, db, cred).sessions : undefined;
  return control ?? NO_CONTROL;
}

const NO_CONTROL: SessionControl = {
  twoPhase: async () => false,
  endTagged: async () => {},
  prepared: async () => [],
  finish: async () => false,
};

/**
 * A `cs:` id no ledger row names: another installation's on the same server, or a row already
 * purged. Never touched; said once per process, by id only.
 */
function warnUnknown(deps: SweepDeps, warned: Set<string>, loc: SweptLocation, id: string): void {
  const seen = `${loc.databaseId}\u0000${id}`;
  if (warned.has(seen)) return;
  if (warned.size >= WARNED_MAX) warned.clear();
  warned.add(seen);
  deps.logger.warn(
    { database_id: loc.databaseId, credential_id: loc.credentialId, prepared_id: id },
    'a prepared transaction named like a workflow write step matches no step this service knows; left alone',
  );
}

/**
 * Runs the sweep now and every minute; returns a stop function. It costs one store query a minute
 * when no write step ran in the last days, else one listing per database and credential they ran on.
 */
export function startPreparedSweep(deps: SweepDeps, everyMs = 60_000): () => void {
  const sweep = preparedSweep(deps);
  const pass = () =>
    sweep().catch((err: unknown) =>
      deps.logger.error({ err: messageOf(err) }, 'sweep of prepared workflow writes failed'),
    );
  void pass();
  const timer = setInterval(pass, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
