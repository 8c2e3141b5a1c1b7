// The pages' stylesheets and browser scripts, read once. They sit in assets/ beside this file,
// and a compiled build copies them to assets/ beside its chunks (bin/build.js), so one relative
// URL finds them in both layouts, as the store's migrations are found. They are files rather than
// inline blocks because the Content-Security-Policy (api/middleware/csp.ts) allows only 'self'.
import { readFileSync } from 'node:fs';

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

const NAMES = [
  'app.css',
  'app.js',
  'docs.css',
  'docs.js',
  'live-reload.js',
  'result-table.js',
  'workflow-editor.css',
  'workflow-editor.js',
];

/** Name → body and content type; public (no asset holds data). */
export const PAGE_ASSETS: ReadonlyMap<string, { body: string; type: string }> = new Map(
  NAMES.map((name) => [
    name,
    {
      body: readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'),
      type: TYPES[name.slice(name.lastIndexOf('.') + 1)]!,
    },
  ]),
);
