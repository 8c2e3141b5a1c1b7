import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { loadMigrations } from '../../store/migrate.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { freePort } from '../helpers/service.ts';

// An older release must not run against a store a newer one migrated: its code would ignore the
// newer rules. `serve`, `worker` and `migrate` refuse, naming both versions; migrations say what
// they apply.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
const stores: TestStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.drop();
});

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    }),
  );
}

async function environment() {
  const store = await createTestStore();
  stores.push(store);
  const t = servers().temporal;
  return {
    store,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: store.url,
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
    },
  };
}

describe('store version safety', () => {
  it('migrate says each version it applies', async () => {
    const { env } = await environment();
    const all = await loadMigrations();
    const first = await run(['migrate'], env);
    expect(first.code, first.err).toBe(0);
    for (const m of all)
      expect(first.err).toContain(`applied store migration ${String(m.version).padStart(4, '0')}_${m.name}`);
    // Nothing left: nothing said.
    const again = await run(['migrate'], env);
    expect(again.code).toBe(0);
    expect(again.err).not.toContain('applied store migration');
  }, 120_000);

  it('serve, worker and migrate refuse a store migrated by a newer release, naming both versions', async () => {
    const { env, store } = await environment();
    expect((await run(['migrate'], env)).code).toBe(0);
    const known = Math.max(...(await loadMigrations()).map((m) => m.version));
    const newer = known + 7;
    const sql = postgres(store.url, { max: 1, onnotice: () => {} });
    try {
      await sql`insert into schema_migrations (version, name) values (${newer}, 'from_a_newer_release')`;
    } finally {
      await sql.end();
    }
    for (const command of ['serve', 'worker', 'migrate']) {
      const r = await run([command], env);
      expect(r.code, `${command}: ${r.err}`).toBe(1);
      expect(r.err).toContain(`the store is at migration ${String(newer).padStart(4, '0')}`);
      expect(r.err).toContain(`up to ${String(known).padStart(4, '0')}`);
    }
  }, 180_000);
});
