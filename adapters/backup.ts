// Keeping a write's rows for undo while the write runs (ExecuteOptions.backup): the rows read are
// handed to the keeper at once, so sealing and storing them overlap the write on the target; what
// keeps them commits only once told the write ran, and the target commits only after that. A write
// that fails keeps nothing; rows that cannot be kept roll the write back.
import { AdapterError } from './errors.ts';
import type { BackupStep } from './types.ts';

/**
 * The write, with the rows its backup read (`rows`, or more than the backup keeps when `cut`)
 * kept while it runs: refused before it runs when there are too many, and reported as written
 * only once the rows are kept. The caller commits the target afterwards.
 */
export async function writeKept<T>(
  backup: BackupStep,
  rows: unknown[][],
  cut: boolean,
  write: () => Promise<T>,
): Promise<T> {
  if (cut || backup.readRows(rows) > backup.maxRows)
    throw new AdapterError(
      `the write touches more than ${backup.maxRows} rows, more than undo keeps; nothing was written`,
      'query',
      'BACKUP_LIMIT',
    );
  const keeping = startKeeping(backup, rows);
  let out: T;
  try {
    out = await write();
  } catch (err) {
    await keeping.written(false);
    throw err;
  }
  await keeping.written(true);
  return out;
}

interface Keeping {
  /**
   * Says how the write went. After a write that ran: resolves once the rows are kept, or throws
   * BACKUP_FAILED. After one that failed: waits for the keeper to give up, whatever it answers.
   */
  written(ok: boolean): Promise<void>;
}

function startKeeping(backup: BackupStep, rows: unknown[][]): Keeping {
  let settle!: (ok: boolean) => void;
  const outcome = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  // Handled from the start: a keeper failing while the write still runs is no unhandled rejection.
  const done = Promise.resolve()
    .then(() => backup.save(rows, outcome))
    .then(
      () => null,
      (err: unknown) => err ?? new Error('the rows could not be kept'),
    );
  return {
    async written(ok: boolean) {
      settle(ok);
      const failed = await done;
      if (ok && failed !== null)
        throw new AdapterError(
          'the rows to undo could not be kept; nothing was written',
          'query',
          'BACKUP_FAILED',
        );
    },
  };
}
