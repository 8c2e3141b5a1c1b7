import { describe, expect, it } from 'vitest';
import type { UserRow } from '../../store/users.ts';
import { peopleCovered, peopleLosingPolicy } from './coverage.ts';
import type { PolicyView } from './policies.ts';

const person = (id: string, role: UserRow['role']) => ({ id, role, email: `${id}@x.test` }) as UserRow;
const people = [person('ann', 'member'), person('bob', 'member'), person('cid', 'admin')];
const view = (id: string, assignments: Array<{ user_id?: string; role?: UserRow['role'] }>) =>
  ({
    policy: { id },
    rules: [],
    assignments: assignments.map((a) => ({
      policy_id: id,
      user_id: a.user_id ?? null,
      role: a.role ?? null,
    })),
  }) as unknown as PolicyView;

describe('who a policy protects (personal assignment before role)', () => {
  const policies = [view('pol_a', [{ role: 'member' }]), view('pol_b', [{ user_id: 'bob' }])];

  it('a role assignment covers the role except people assigned another policy personally', () => {
    const all = policies.flatMap((p) => p.assignments);
    expect(peopleCovered(all, people, 'pol_a').map((p) => p.id)).toEqual(['ann']);
    expect(peopleCovered(all, people, 'pol_b').map((p) => p.id)).toEqual(['bob']);
  });

  it('replacing assignments names exactly the people who fall out', () => {
    expect(peopleLosingPolicy(policies, people, 'pol_a', { users: [], roles: [] }).map((p) => p.id)).toEqual([
      'ann',
    ]);
    expect(
      peopleLosingPolicy(policies, people, 'pol_a', { users: ['ann'], roles: [] }).map((p) => p.id),
    ).toEqual([]);
  });
});
