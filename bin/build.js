#!/usr/bin/env node
// `npm run build`: compiles the service into dist/ (or --outdir DIR, inside the repository so that
// the packages in node_modules resolve from it):
//
//   countersign.js, main.js, chunk-*.js  cli/run.ts and everything it imports, bundled by esbuild
//                                        (ESM, npm packages left as imports, one chunk per module
//                                        group that is imported on first use)
//   workflow-bundle.js                   workflows/index.ts bundled by Temporal's bundleWorkflowCode;
//                                        the compiled worker loads it (workflowBundle.codePath)
//   migrations/*.sql                     the store migrations, read beside the compiled code
//   assets/*.js, assets/*.css            the pages' scripts and stylesheets (api/web/kit/assets), likewise,
//                                        and the browser bundles (api/web/kit/bundles: the SQL editor)
//   embedded-store-thread.mjs            dev mode's PGlite thread, started by URL beside the code
//   build-id                             the release's build id (bin/build-id.js), for worker versioning
//   build.json                           every source file both bundles were made from, with its
//                                        size, mtime and SHA-256, so bin/countersign.js can tell a
//                                        build made from the current sources from a stale one
//
// `--if-stale` does nothing when the build is already current (npm start, npm run worker).
import { copyFile, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BROWSER_BUNDLE_OPTIONS, BROWSER_BUNDLES } from '../api/web/kit/bundles/index.js';
import { sourceBuildId } from './build-id.js';
import { buildState, hashFile, MANIFEST } from './build-state.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    outdir: { type: 'string', default: 'dist' },
    'if-stale': { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
});
const outdir = resolve(ROOT, values.outdir);
const say = (line) => values.quiet || process.stderr.write(`build: ${line}\n`);

if (values['if-stale']) {
  const state = await buildState(outdir);
  if (state.fresh) {
    say(`${relative(ROOT, outdir)}/ is up to date`);
    process.exit(0);
  }
  say(state.reason);
}

const started = performance.now();
const [{ build }, { bundleWorkflowCode }] = await Promise.all([
  import('esbuild'),
  import('@temporalio/worker'),
]);

// Built beside the target and swapped in whole, so a reader never sees half of one build.
const temp = `${outdir}.tmp-${process.pid}`;
await rm(temp, { recursive: true, force: true });
await mkdir(temp, { recursive: true });
try {
  const common = {
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    logLevel: 'warning',
    metafile: true,
  };
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };
  const [app, workflowInputs, workflows] = await Promise.all([
    build({
      ...common,
      entryPoints: { countersign: 'cli/run.ts' },
      outdir: temp,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      sourcemap: 'linked',
      // Workflow code is never imported by the compiled code itself: the worker loads its bundle.
    }),
    // Only to learn which sources Temporal's bundle is made of (writes nothing).
    build({ ...common, entryPoints: ['workflows/index.ts'], write: false, outdir: temp }),
    bundleWorkflowCode({
      workflowsPath: join(ROOT, 'workflows/index.ts'),
      // The failure converter the worker names (core/payload-codec.ts), copied beside the code below.
      failureConverterPath: join(ROOT, 'core/failure-converter.cjs'),
      logger: quiet,
    }),
  ]);
  await writeFile(join(temp, 'workflow-bundle.js'), workflows.code);
  await writeFile(join(temp, 'build-id'), `${sourceBuildId(ROOT)}\n`);

  await mkdir(join(temp, 'migrations'));
  const migrations = (await readdir(join(ROOT, 'store/migrations'))).filter((f) => f.endsWith('.sql'));
  for (const f of migrations) await copyFile(join(ROOT, 'store/migrations', f), join(temp, 'migrations', f));

  // Browser scripts the pages serve (api/web/kit/assets), read beside the compiled code.
  await mkdir(join(temp, 'assets'));
  const assets = (await readdir(join(ROOT, 'api/web/kit/assets'))).filter((f) => /\.(js|css)$/.test(f));
  for (const f of assets) await copyFile(join(ROOT, 'api/web/kit/assets', f), join(temp, 'assets', f));
  const browser = await build({
    ...BROWSER_BUNDLE_OPTIONS,
    absWorkingDir: ROOT,
    entryPoints: Object.entries(BROWSER_BUNDLES).map(([out, entry]) => ({
      out: out.replace(/\.js$/, ''),
      in: entry,
    })),
    outdir: join(temp, 'assets'),
    metafile: true,
  });

  // Files the code starts or loads by URL beside itself (new URL('./…', import.meta.url)): a worker
  // thread, the Temporal failure converter.
  const besides = ['cli/embedded-store-thread.mjs', 'core/failure-converter.cjs'];
  for (const f of besides) await copyFile(join(ROOT, f), join(temp, f.split('/').at(-1)));

  const sources = new Set(
    [
      ...Object.keys(app.metafile.inputs),
      ...Object.keys(workflowInputs.metafile.inputs),
      ...Object.keys(browser.metafile.inputs),
    ].filter((f) => !f.startsWith('node_modules/') && !f.includes(':')),
  );
  for (const f of migrations) sources.add(`store/migrations/${f}`);
  for (const f of assets) sources.add(`api/web/kit/assets/${f}`);
  for (const f of besides) sources.add(f);
  // The workflow bundle holds the SDK's own code: a changed lock file may change it.
  sources.add('package-lock.json');
  const inputs = {};
  for (const file of [...sources].sort()) {
    const full = join(ROOT, file);
    const s = await stat(full);
    inputs[file] = { size: s.size, mtimeMs: s.mtimeMs, sha256: await hashFile(full) };
  }
  await writeFile(
    join(temp, MANIFEST),
    `${JSON.stringify({ node: process.version, builtAt: new Date().toISOString(), inputs }, null, 1)}\n`,
  );

  const old = `${outdir}.old-${process.pid}`;
  await rename(outdir, old).catch((err) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await rename(temp, outdir);
  await rm(old, { recursive: true, force: true });
  say(
    `${relative(ROOT, outdir)}/ built from ${Object.keys(inputs).length} source files in ${Math.round(performance.now() - started)} ms`,
  );
} catch (err) {
  await rm(temp, { recursive: true, force: true });
  throw err;
}
