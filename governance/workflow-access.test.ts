import { describe, expect, it } from 'vitest';
import type { StepDefinition } from '../workflows/types.ts';
import { mayRead, mayStart } from './workflow-access.ts';

const person = (userId: string, role: 'member' | 'admin' | 'super_admin' = 'member') =>
  ({ kind: 'user', userId, role }) as const;
const key = { kind: 'api_key' } as const;
const approvalBy = (permissions: StepDefinition['permissions']): StepDefinition => ({
  id: 'wfs_1',
  name: 'sign_off',
  condition: null,
  action: { __type__: 'approval', reviews_required: 1, timeout_seconds: null },
  permissions,
});

describe('mayStart (run_permissions)', () => {
  it('admits every person when the list is empty (the default, as before the field)', () => {
    expect(mayStart(person('usr_m'), { run_permissions: [] })).toBe(true);
  });
  it('admits only listed users and roles, plus super admins and organization keys', () => {
    const wf = { run_permissions: [{ role: 'admin' as const }, { user_id: 'usr_ok' }] };
    expect(mayStart(person('usr_m'), wf)).toBe(false);
    expect(mayStart(person('usr_ok'), wf)).toBe(true);
    expect(mayStart(person('usr_a', 'admin'), wf)).toBe(true);
    expect(mayStart(person('usr_s', 'super_admin'), { run_permissions: [{ user_id: 'usr_ok' }] })).toBe(true);
    expect(mayStart(key, { run_permissions: [{ user_id: 'usr_ok' }] })).toBe(true);
  });
});

describe('mayRead', () => {
  const wf = { run_permissions: [{ user_id: 'usr_ok' }], steps: [approvalBy([{ user_id: 'usr_appr' }])] };
  it('admits starters, admins and named approvers; no other member', () => {
    expect(mayRead(person('usr_ok'), wf)).toBe(true);
    expect(mayRead(person('usr_a', 'admin'), wf)).toBe(true);
    expect(mayRead(person('usr_appr'), wf)).toBe(true);
    expect(mayRead(person('usr_m'), wf)).toBe(false);
  });
});
