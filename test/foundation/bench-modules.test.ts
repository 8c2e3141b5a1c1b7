// `npm run bench` (bench/run.ts) imports every module in bench/ in a plain Node process, not
// under vitest, and runs its default export. A module there that is not a bench (helpers live in
// bench/support/), or a bench that imports a test helper which imports vitest
// (test/harness/servers.ts does, for `inject`), fails the whole run: this loads them as it does.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run bench', () => {
  it('loads every bench module outside vitest, each a bench with a name and a run', async () => {
    const modules = readdirSync(`${ROOT}/bench`).filter(
      (f) => f.endsWith('.ts') && !['run.ts', 'report.ts'].includes(f) && !f.endsWith('.test.ts'),
    );
    expect(modules.length).toBeGreaterThan(10);
    const script = `
      const names = [];
      for (const f of ${JSON.stringify(modules)}) {
        const b = (await import('./bench/' + f)).default;
        if (typeof b?.name !== 'string' || typeof b?.run !== 'function') throw new Error(f + ' is not a bench');
        names.push(b.name);
      }
      console.log(JSON.stringify(names));
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    expect(JSON.parse(stdout)).toHaveLength(modules.length);
  }, 120_000);
});
