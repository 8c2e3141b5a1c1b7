import { describe, expect, it } from 'vitest';
import { cronProblem } from './cron.ts';

describe('cronProblem (SPEC.md 2.1: standard 5-field cron, UTC)', () => {
  it.each(['* * * * *', '0 3 * * *', '*/5 0-6 1,15 JAN-MAR mon-fri', '0 0 * * 7', '5-10/2 * * * SUN'])(
    'accepts %s',
    (expr) => expect(cronProblem(expr)).toBeNull(),
  );
  it.each([
    ['61 * * * *', /minute/],
    ['* 24 * * *', /hour/],
    ['* * 0 * *', /day of month/],
    ['* * * 13 *', /month/],
    ['* * * * 8', /day of week/],
    ['0 0 * * * *', /5 fields/],
    ['@hourly', /5 fields/],
    ['*/0 * * * *', /step/],
    ['10-5 * * * *', /backwards/],
    ['CRON_TZ=Europe/Paris 0 0 * * *', /5 fields/],
  ])('refuses %s', (expr, message) => expect(cronProblem(expr)).toMatch(message));
});
