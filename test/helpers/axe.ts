// axe-core (WCAG 2 and 2.1, A and AA rules) over a page in Chromium, injected through
// page.evaluate so the page keeps its strict Content-Security-Policy while it is checked.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

export interface Violation {
  id: string;
  impact: string | null;
  help?: string;
  nodes: Array<{ target: string[] }>;
}

let source: Promise<string> | null = null;

/** Serious and critical axe violations of the page as it stands (the first 3 nodes of each). */
export async function axe(page: Page): Promise<Violation[]> {
  source ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await source);
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run(o: unknown): Promise<unknown> } }).axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    }),
  )) as { violations: Violation[]; passes: unknown[] };
  // axe did run its rules on this page (a check that cannot fail would pass with nothing).
  expect(result.passes.length).toBeGreaterThan(5);
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ ...v, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })) }));
}
