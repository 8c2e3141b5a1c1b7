// Whether a build (bin/build.js) was made from the sources as they are now. Plain JavaScript with
// Node built-ins only: bin/countersign.js asks this before it loads anything else.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MANIFEST = 'build.json';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function hashFile(file) {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/**
 * `{ fresh: true }` when `outdir` holds a build whose every source file is unchanged (same size
 * and mtime, or else the same SHA-256), else `{ fresh: false, reason }`. Synchronous work only:
 * a stat per source file, and a hash only for a file whose mtime moved.
 */
export function buildState(outdir) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(outdir, MANIFEST), 'utf8'));
  } catch {
    return { fresh: false, missing: true, reason: `no build in ${outdir}` };
  }
  for (const [file, was] of Object.entries(manifest.inputs ?? {})) {
    const full = join(ROOT, file);
    let now;
    try {
      now = statSync(full);
    } catch {
      return { fresh: false, reason: `${file} is gone since the build` };
    }
    if (now.size === was.size && now.mtimeMs === was.mtimeMs) continue;
    const sha = createHash('sha256').update(readFileSync(full)).digest('hex');
    if (sha !== was.sha256) return { fresh: false, reason: `${file} changed since the build` };
  }
  return { fresh: true };
}
