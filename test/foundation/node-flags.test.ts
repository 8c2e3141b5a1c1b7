// Every way the project starts `serve` and `worker` passes the same V8 flags (cli/node-flags.ts):
// a copy that drifted would run production with other memory bounds than the benches measured.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../cli/node-flags.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('node flags', () => {
  it('npm start and npm run worker run node with them', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const script of ['start', 'worker']) {
      const node = /(?:^|&& )(?:\S+=\S+ )*node ((?:--\S+ )*)bin\/countersign\.js/.exec(pkg.scripts[script]!);
      expect(node?.[1]?.trim().split(' ')).toEqual([...NODE_FLAGS]);
    }
  });

  it("the Dockerfile's ENTRYPOINT runs node with them", async () => {
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    const entrypoint = JSON.parse(/^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)![1]!) as string[];
    expect(entrypoint).toEqual(['node', ...NODE_FLAGS, 'bin/countersign.js']);
  });

  it('node accepts them', async () => {
    const { execFileSync } = await import('node:child_process');
    expect(
      execFileSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], {
        encoding: 'utf8',
      }),
    ).toBe('ok');
  });
});
