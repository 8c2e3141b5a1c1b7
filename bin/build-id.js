// The release's build id: the Worker Deployment Version's build id that pins every run to the code
// that started it (worker/versioning.ts). Plain JavaScript with Node built-ins only, so bin/build.js
// writes it into the build (dist/build-id) and processes run from the sources compute the same value.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Folders whose files never run in serve or the worker. */
const SKIPPED = new Set(['node_modules', 'test', 'test-output', 'bench', 'docs', 'deploy']);
const CODE = /\.(ts|tsx|js|mjs|cjs|sql|css)$/;

function codeFiles(dir, rel, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name.startsWith('dist') || SKIPPED.has(entry.name)) continue;
      codeFiles(join(dir, entry.name), path, out);
    } else if (entry.isFile() && CODE.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/**
 * `<package version>-<12 hex digits>`: the digits hash every code file of serve and the worker
 * (workflow definitions, activities and what the API puts into a run's snapshot) and the lock
 * file (the SDK is bundled into the workflow code). Any change to them is a new build id, so a run
 * never meets code other than the code that started it; the same sources give the same id.
 */
export function sourceBuildId(root = ROOT) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const hash = createHash('sha256');
  for (const file of [...codeFiles(root, '', []), 'package-lock.json'].sort()) {
    const digest = createHash('sha256')
      .update(readFileSync(join(root, file)))
      .digest('hex');
    hash.update(`${file}\0${digest}\n`);
  }
  return `${version}-${hash.digest('hex').slice(0, 12)}`;
}
