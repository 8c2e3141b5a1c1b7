// The pages' stylesheets and browser scripts, read once. They sit in assets/ beside this file,
// and a compiled build copies them to assets/ beside its chunks (bin/build.js), so one relative
// URL finds them in both layouts, as the store's migrations are found. They are files rather than
// inline blocks because the Content-Security-Policy (api/middleware/csp.ts) allows only 'self'.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { BROWSER_BUNDLE_OPTIONS, BROWSER_BUNDLES } from './bundles/index.js';

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

const NAMES = [
  'app.css',
  'ai-connect.js',
  'app.js',
  'docs.css',
  'docs.js',
  'live-reload.js',
  'result-table.js',
  'workflow-editor.css',
  'workflow-editor.js',
];

export interface PageAsset {
  body: string;
  type: string;
}

/** Name → body and content type; public (no asset holds data). */
export const PAGE_ASSETS: ReadonlyMap<string, PageAsset> = new Map(
  NAMES.map((name) => [
    name,
    {
      body: readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'),
      type: TYPES[name.slice(name.lastIndexOf('.') + 1)]!,
    },
  ]),
);

const bundled = new Map<string, Promise<PageAsset>>();

/**
 * A script bundled from npm packages (bundles/index.js): a build wrote it to assets/ beside the
 * code; running from sources, it is bundled here on first request (esbuild, a development
 * dependency, is then installed) and kept for the life of the process.
 */
export function bundledAsset(name: string): Promise<PageAsset> | null {
  const entry = Object.hasOwn(BROWSER_BUNDLES, name) ? BROWSER_BUNDLES[name] : undefined;
  if (!entry) return null;
  let found = bundled.get(name);
  if (!found) {
    found = load(name, entry);
    bundled.set(name, found);
    found.catch(() => bundled.delete(name));
  }
  return found;
}

async function load(name: string, entry: string): Promise<PageAsset> {
  const type = TYPES.js!;
  try {
    return { body: await readFile(new URL(`./assets/${name}`, import.meta.url), 'utf8'), type };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const { build } = await import('esbuild');
  const out = await build({
    ...BROWSER_BUNDLE_OPTIONS,
    absWorkingDir: root,
    entryPoints: [entry],
    write: false,
  });
  return { body: out.outputFiles[0]!.text, type };
}
