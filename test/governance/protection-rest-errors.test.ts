// Through the real pipeline: a MariaDB error that quotes the statement it ran — under
// a policy, the rewritten one with the hash salt — reaches neither the REST caller nor the audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { startMariadbTarget, type Target } from './protection-targets.ts';

let t: Target;
let token: string;
beforeAll(async () => {
  t = await startMariadbTarget();
  const member = t.fx.member as { userId: string };
  token = (
    await createPersonalToken(t.fx.svc.deps.sql, { userId: member.userId, name: 't', expiresAt: null })
  ).secret;
});
afterAll(async () => t?.stop());

describe('server errors under a policy, through REST', () => {
  it.each([
    'select cast(ssn as unsigned) + ~0 from users',
    'select ~0 + length(ssn) from users',
    "select updatexml(1, concat('~', ssn), 1) from users",
  ])('%s', async (statement) => {
    const res = await t.fx.svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: t.fx.databaseId, statement }),
    });
    const text = await res.text();
    expect(text).not.toContain(t.fx.salt);
    expect(text).not.toMatch(/md5\(|concat\('/i);
    const audited = await t.fx.svc.deps.sql<{ detail: string | null }[]>`
      select detail from audit_log where statement = ${statement}`;
    expect(audited.length).toBeGreaterThan(0);
    for (const a of audited) {
      expect(a.detail ?? '').not.toContain(t.fx.salt);
      expect(a.detail ?? '').not.toMatch(/md5\(|concat\('/i);
    }
  });
});
