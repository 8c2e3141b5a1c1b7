import { describe, expect, it } from 'vitest';
import { cronProblem, nextRuns, temporalCronExpressions } from './cron.ts';

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

describe('nextRuns (the editor preview, UTC)', () => {
  const from = new Date('2026-11-23T10:17:30Z');
  const iso = (expr: string, n = 3) => nextRuns(expr, from, n).map((d) => d.toISOString());
  it('every 15 minutes', () =>
    expect(iso('*/15 * * * *')).toEqual([
      '2026-11-23T10:30:00.000Z',
      '2026-11-23T10:45:00.000Z',
      '2026-11-23T11:00:00.000Z',
    ]));
  it('weekdays at 09:00 skip the weekend', () =>
    expect(iso('0 9 * * MON-FRI', 6)).toEqual([
      '2026-11-24T09:00:00.000Z',
      '2026-11-25T09:00:00.000Z',
      '2026-11-26T09:00:00.000Z',
      '2026-11-27T09:00:00.000Z',
      '2026-11-30T09:00:00.000Z',
      '2026-12-01T09:00:00.000Z',
    ]));
  it('ORs day of month and day of week when both are set', () =>
    expect(iso('0 0 1 * 0', 3)).toEqual([
      '2026-11-29T00:00:00.000Z',
      '2026-12-01T00:00:00.000Z',
      '2026-12-06T00:00:00.000Z',
    ]));
  it('7 is Sunday, and a leap day is found years ahead', () => {
    expect(iso('0 0 * * 7', 1)).toEqual(['2026-11-29T00:00:00.000Z']);
    expect(iso('0 12 29 2 *', 1)).toEqual(['2028-02-29T12:00:00.000Z']);
  });
  it('an expression that never fires gives none', () => expect(iso('0 0 30 2 *')).toEqual([]));
});

describe('temporalCronExpressions (standard cron for Temporal, which ANDs the day fields)', () => {
  it('splits day of month OR day of week into two specs when both are restricted', () =>
    expect(temporalCronExpressions(' 0  12 1 * 1 ')).toEqual(['0 12 1 * *', '0 12 * * 1']));
  it.each(['0 12 * * 1', '0 12 1 * *', '0 0 */2 * MON', '0 0 1 * */2', '*/5 * * * *'])(
    'keeps %s as one spec (a day field starting with * means AND, as in Vixie cron)',
    (expr) => expect(temporalCronExpressions(expr)).toEqual([expr]),
  );
});
