// "Who is asking" reaches the domain functions in one shape, the Caller of audit/actors.ts
// ({ orgId, actor, origin }): a function of these files that takes the organization and the
// actor (or the principal) as separate parameters would bring back an adapter at every door.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Domain files whose exported functions take a Caller. */
const FILES = [
  'automation/approvals.ts',
  'automation/definitions.ts',
  'automation/runs.ts',
  'governance/ai-access.ts',
  'governance/ai-clients.ts',
  'governance/audit-access.ts',
  'governance/protection/policies.ts',
  'governance/requests.ts',
  'governance/workflow-access.ts',
  'identity/account.ts',
  'identity/directory.ts',
  'identity/people.ts',
  'registry/agents.ts',
  'registry/check-connection.ts',
  'registry/databases.ts',
  'registry/grants.ts',
  'registry/register.ts',
  'workspace/preview-as.ts',
];

/** Exceptions by name, each with why. */
const ALLOWED: Record<string, string> = {
  // The approver's e-mail goes into the run's history with the decision; a Caller has none.
  'automation/runs.ts decideApproval': 'takes the principal',
};

/** Each exported function's name and parameter names (destructured parameters have none). */
function exportedParams(text: string): Array<{ name: string; params: string[] }> {
  const out: Array<{ name: string; params: string[] }> = [];
  for (const m of text.matchAll(/export (?:async )?function (\w+)(?:<[^(]*>)?\(/g)) {
    let depth = 1;
    let i = (m.index ?? 0) + m[0].length;
    const start = i;
    for (; i < text.length && depth > 0; i++) {
      if ('([{'.includes(text[i] as string)) depth++;
      else if (')]}'.includes(text[i] as string)) depth--;
    }
    const list = text.slice(start, i - 1);
    // Parameters start at the top level of the list: at its start or after a comma there.
    const params: string[] = [];
    let level = 0;
    let piece = '';
    let last = '';
    for (const ch of `${list},`) {
      if ('([{<'.includes(ch)) level++;
      // The `>` of an arrow (`=>`) closes nothing.
      else if (')]}'.includes(ch) || (ch === '>' && last !== '=')) level--;
      last = ch;
      if (ch === ',' && level === 0) {
        const name = /^\s*(\w+)\??\s*:/.exec(piece)?.[1];
        if (name) params.push(name);
        piece = '';
      } else piece += ch;
    }
    out.push({ name: m[1] as string, params });
  }
  return out;
}

describe('the caller of a domain function', () => {
  const found = FILES.flatMap((file) =>
    exportedParams(readFileSync(join(ROOT, file), 'utf8')).map((f) => ({ ...f, file })),
  );

  it('reads the parameters (the check below is not vacuous)', () => {
    expect(found.length).toBeGreaterThan(40);
    expect(found.filter((f) => f.params.includes('caller')).length).toBeGreaterThan(25);
    expect(found.find((f) => f.name === 'reviewRequest')?.params).toEqual(['deps', 'caller', 'id', 'input']);
    // The parser sees the shape it forbids.
    const sample =
      'export async function f(sql: Tx, on: (x: Map<string, number>) => void, orgId: string, actor: A) {}';
    expect(exportedParams(sample)).toEqual([{ name: 'f', params: ['sql', 'on', 'orgId', 'actor'] }]);
  });

  it('takes no organization beside an actor or a principal, and no principal', () => {
    const split = found
      .filter((f) => !(`${f.file} ${f.name}` in ALLOWED))
      .filter(
        (f) =>
          f.params.includes('principal') ||
          (f.params.includes('orgId') && f.params.some((p) => p === 'actor' || p === 'who')),
      )
      .map((f) => `${f.file} ${f.name}(${f.params.join(', ')})`);
    expect(split).toEqual([]);
  });

  it('names only exceptions that still exist', () => {
    const names = new Set(found.map((f) => `${f.file} ${f.name}`));
    expect(Object.keys(ALLOWED).filter((k) => !names.has(k))).toEqual([]);
  });
});
