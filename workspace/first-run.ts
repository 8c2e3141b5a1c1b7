// The first-run checklist on the home page: the steps that make an organization useful, each
// ticked from what the organization has (store/first-run.ts), not from what someone clicked.
// Admins see it until every step is done or they dismiss it; the dismissal is theirs alone.
import { forbidden } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { dismissFirstRun, firstRunDismissed, firstRunFacts } from '../store/first-run.ts';
import type { Person } from './saved-queries.ts';

export interface ChecklistStep {
  id: 'database' | 'access' | 'policy' | 'people' | 'ai' | 'workflow';
  label: string;
  /** What doing it means, in a sentence. */
  why: string;
  done: boolean;
  /** The page that does it. */
  href: string;
}

export interface FirstRunChecklist {
  steps: ChecklistStep[];
  done: number;
  dismissed: boolean;
}

const isAdmin = (who: Person) => who.role === 'admin' || who.role === 'super_admin';

/** The checklist for an admin; null for a member (the steps are an admin's to take). */
export async function firstRunChecklist(sql: Tx, who: Person): Promise<FirstRunChecklist | null> {
  if (!isAdmin(who)) return null;
  const [f, dismissed] = await Promise.all([
    firstRunFacts(sql, who.orgId),
    firstRunDismissed(sql, who.userId),
  ]);
  const db = f.firstDatabaseId ? `/databases/${f.firstDatabaseId}` : '/databases';
  const steps: ChecklistStep[] = [
    {
      id: 'database',
      label: 'Register a database',
      why: 'Countersign connects to it with the credentials you give; people never see them.',
      done: f.databases,
      href: '/databases',
    },
    {
      id: 'access',
      label: 'Restrict a database and grant access',
      why: 'Restricted databases exist only for the people you grant them to.',
      done: f.restrictedAndGranted,
      href: db,
    },
    {
      id: 'policy',
      label: 'Add a data-protection policy',
      why: 'Hide, mask or hash the columns some people should not read.',
      done: f.policies,
      href: f.firstDatabaseId ? `${db}/policies` : '/databases',
    },
    {
      id: 'people',
      label: 'Invite people',
      why: 'Each person signs in with their own account and role.',
      done: f.otherPeople,
      href: '/people',
    },
    {
      id: 'ai',
      label: 'Connect an AI client',
      why: 'Claude, Cursor, VS Code or ChatGPT query through the same rules as people.',
      done: f.aiClients,
      href: '/settings/ai',
    },
    {
      id: 'workflow',
      label: 'Build a workflow',
      why: 'Queries, approvals and calls that run in order, with an audit trail.',
      done: f.workflows,
      href: '/workflows/new',
    },
  ];
  return { steps, done: steps.filter((s) => s.done).length, dismissed };
}

/** Whether the home page shows the checklist to this person. */
export function checklistShown(list: FirstRunChecklist | null): list is FirstRunChecklist {
  return list !== null && !list.dismissed && list.done < list.steps.length;
}

/** Hides the checklist for this person from now on (a preference, not an organization setting). */
export async function dismissChecklist(sql: Tx, who: Person): Promise<void> {
  if (!isAdmin(who)) throw forbidden('only admins see the first-run checklist');
  await dismissFirstRun(sql, who.userId);
}
