// The source tree's shape: no import cycle, type-only imports included, since a type
// cycle still ties folders together; governance/ holds the pipeline and its rules, not every
// domain, so it stays under ~15 % of the code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SKIP = new Set(['node_modules', 'test', 'test-output', 'dist', 'docs', 'bench', '.git']);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;
const DYNAMIC = /import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Relative imports of each file, resolved to repository paths (static, re-exports and import()). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(ROOT);
  const known = new Set(files.map((f) => relative(ROOT, f)));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const from = relative(ROOT, file);
    const targets: string[] = [];
    for (const re of [IMPORT, DYNAMIC]) {
      for (const m of text.matchAll(re)) {
        const spec = m[1] as string;
        const target = relative(ROOT, resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        if (known.has(target)) targets.push(target);
        else if (known.has(`${target}x`)) targets.push(`${target}x`);
      }
    }
    graph.set(from, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** One import or re-export statement between two repository files. */
interface ImportEdge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at build time, no run-time arrow. */
  typeOnly: boolean;
}

const STATEMENT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'"`;]*?)\s*from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every relative import statement of the source files, with whether it is type-only. */
function importEdges(): ImportEdge[] {
  const files = sourceFiles(ROOT);
  const known = new Set(files.map((f) => relative(ROOT, f)));
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const from = relative(ROOT, file);
    const add = (spec: string, typeOnly: boolean) => {
      const target = relative(ROOT, resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      const to = known.has(target) ? target : known.has(`${target}x`) ? `${target}x` : null;
      if (to) edges.push({ from, to, typeOnly });
    };
    for (const m of text.matchAll(STATEMENT)) add(m[4] as string, Boolean(m[2]));
    for (const m of text.matchAll(DYNAMIC)) add(m[1] as string, false);
  }
  return edges;
}

/**
 * The folder order (DESIGN.md "Layout"), top first: a folder may import the folders below it,
 * never one above. Entry programs on top, the pure leaves (expr, core, config) at the bottom.
 */
const ORDER = [
  'cli',
  'agent',
  'api',
  'worker',
  'activities',
  'dashboards',
  'workspace',
  'automation',
  'registry',
  'governance',
  'identity',
  'audit',
  'integrations',
  'tunnels',
  'sql',
  'store',
  'adapters',
  'workflows',
  'expr',
  'core',
  'config',
];

/** Imports against the order, allowed by name (`from -> to`), each with why. */
const ALLOWED_UPWARD: Record<string, string> = {
  // The workflow code is bundled alone by the Temporal worker: it names the activities it calls
  // through proxyActivities by their types, never their code.
  'workflows/steps.ts -> activities/index.ts': 'type-only: proxyActivities signature',
  'workflows/scheduled.ts -> activities/index.ts': 'type-only: proxyActivities signature',
  // The process's dependency bag names what the entry points put in it.
  'core/deps.ts -> store/db.ts': 'type-only: the composition root',
  'core/deps.ts -> store/crypto.ts': 'type-only: the composition root',
  'core/deps.ts -> store/access-cache.ts': 'type-only: the composition root',
  'core/deps.ts -> integrations/review-notices.ts': 'type-only: the composition root',
  'core/deps.ts -> tunnels/hub.ts': 'type-only: the composition root',
  'core/deps.ts -> adapters/types.ts': 'type-only: the composition root',
  'core/deps.ts -> integrations/mail.ts': 'type-only: the composition root',
  // The Temporal payload codec encrypts under the keyring and records whose key sealed a payload;
  // it is loaded by the client, the worker and the Temporal UI codec route alike, so it sits in core.
  'core/payload-codec.ts -> store/crypto.ts': 'type-only: the keyring it is handed',
  'core/payload-codec.ts -> store/db.ts': 'type-only: the store handle it is handed',
  'core/payload-codec.ts -> store/temporal-owners.ts': 'value: records which organization owns a payload key',
  'core/payload-key-usage.ts -> store/crypto.ts': 'type-only: the keyring it is handed',
};

function folderOf(path: string): string | null {
  return path.includes('/') ? (path.split('/')[0] as string) : null;
}

function lines(path: string): number {
  return readFileSync(join(ROOT, path), 'utf8').split('\n').length;
}

describe('source layout', () => {
  const graph = importGraph();

  it('finds the files and their imports (the check below is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('governance/query.ts')?.length ?? 0).toBeGreaterThan(3);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('lets no file under api/ import a value from store/ (reads go through a domain function)', () => {
    const edges = importEdges();
    const fromApi = edges.filter((e) => e.from.startsWith('api/') && e.to.startsWith('store/'));
    // Not vacuous: api/ does name store types (rows it presents).
    expect(fromApi.length).toBeGreaterThan(5);
    const values = fromApi.filter((e) => !e.typeOnly).map((e) => `${e.from} -> ${e.to}`);
    if (values.length) console.log(`api/ value imports from store/:\n  ${values.join('\n  ')}`);
    expect(values).toEqual([]);
  });

  it('declares the place of every source folder in the order', () => {
    const folders = new Set([...graph.keys()].map(folderOf).filter((f): f is string => f !== null));
    expect([...folders].filter((f) => !ORDER.includes(f))).toEqual([]);
  });

  it('has no import against the folder order but those allowed by name', () => {
    const rank = (f: string) => ORDER.indexOf(f);
    const upward = importEdges().filter((e) => {
      const from = folderOf(e.from);
      const to = folderOf(e.to);
      return from !== null && to !== null && from !== to && rank(to) < rank(from);
    });
    // Not vacuous: the allowed ones are found.
    expect(upward.length).toBeGreaterThan(0);
    const named = (e: ImportEdge) => `${e.from} -> ${e.to}`;
    // An allowance named type-only holds only while the import is `import type`.
    const allowed = (e: ImportEdge) =>
      named(e) in ALLOWED_UPWARD && (e.typeOnly || !ALLOWED_UPWARD[named(e)]?.startsWith('type-only'));
    const violations = upward.filter((e) => !allowed(e)).map(named);
    if (violations.length) console.log(`imports against the folder order:\n  ${violations.join('\n  ')}`);
    expect(violations).toEqual([]);
    // An allowance no import needs any more goes too, so the list stays the truth.
    const stale = Object.keys(ALLOWED_UPWARD).filter((k) => !upward.some((e) => named(e) === k));
    expect(stale).toEqual([]);
  });

  it('keeps governance/ under 15 % of the code', () => {
    let all = 0;
    let governance = 0;
    for (const file of graph.keys()) {
      const n = lines(file);
      all += n;
      if (file.startsWith('governance/')) governance += n;
    }
    const share = governance / all;
    console.log(`governance/ share: ${(share * 100).toFixed(1)} % of ${all} lines`);
    expect(share).toBeLessThan(0.15);
  });
});
