import { describe, expect, it } from 'vitest';
import { refuseApproval } from './approval.ts';
import type { ApprovalInput } from './types.ts';

const who = (user_id: string, role: ApprovalInput['role'] = 'member'): ApprovalInput => ({
  user_id,
  email: `${user_id}@example.test`,
  role,
  decision: 'approve',
  comment: null,
});

describe('refuseApproval', () => {
  const base = { waitingStep: 'ok', permissions: [], initiatorUserId: 'usr_a', approvals: [] };
  it('admits admins when permissions are empty, and no members', () => {
    expect(refuseApproval({ ...base, who: who('usr_b', 'admin') })).toBeNull();
    expect(refuseApproval({ ...base, who: who('usr_b', 'member') })?.kind).toBe('not_permitted');
  });
  it('refuses the initiator even when permitted', () => {
    const r = refuseApproval({ ...base, permissions: [{ user_id: 'usr_a' }], who: who('usr_a', 'admin') });
    expect(r?.message).toMatch(/started the run/);
  });
  it('admits a named user or a role', () => {
    expect(refuseApproval({ ...base, permissions: [{ user_id: 'usr_c' }], who: who('usr_c') })).toBeNull();
    expect(refuseApproval({ ...base, permissions: [{ role: 'member' }], who: who('usr_c') })).toBeNull();
    expect(refuseApproval({ ...base, permissions: [{ role: 'admin' }], who: who('usr_c') })?.kind).toBe(
      'not_permitted',
    );
  });
  it('counts one decision per person', () => {
    const approvals = [
      { step: 'ok', user_id: 'usr_c', email: '', decision: 'approve' as const, comment: null, at: '' },
    ];
    expect(
      refuseApproval({ ...base, approvals, permissions: [{ role: 'member' }], who: who('usr_c') })?.message,
    ).toMatch(/already/);
  });
  it('says when the run is not waiting', () => {
    expect(refuseApproval({ ...base, waitingStep: null, who: who('usr_b', 'admin') })?.kind).toBe(
      'not_waiting',
    );
  });
});
