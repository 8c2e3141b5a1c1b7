// Risk levels of a write, shown to reviewers with the reason: DDL changes structure for everyone,
// a write without WHERE touches every row, a large preview many; anything else is ordinary.
import type { PreviewPlan } from './statements.ts';

export type RiskLevel = 'ddl' | 'no_where' | 'large' | 'ordinary';

export interface Risk {
  level: RiskLevel;
  why: string;
}

/** Rows in the preview above which a write is large. */
export const LARGE_WRITE_ROWS = 1000;

export function riskOf(plan: PreviewPlan, count: number | null, large = LARGE_WRITE_ROWS): Risk {
  if (plan.kind === 'ddl') return { level: 'ddl', why: `${plan.verb} changes the structure of the database` };
  if (plan.kind === 'rows' && !plan.filtered)
    return { level: 'no_where', why: `${plan.verb} has no WHERE clause: it touches every row` };
  if (count !== null && count > large)
    return { level: 'large', why: `it would touch ${count} rows, more than ${large}` };
  return { level: 'ordinary', why: 'an ordinary write' };
}
