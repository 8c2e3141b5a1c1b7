// SPEC.md 2.1: standard 5-field cron syntax, evaluated in UTC. Checked here so a malformed
// expression is a 422 naming `cron_schedule` before anything reaches Temporal.

const FIELDS: Array<{ name: string; min: number; max: number; names?: string[] }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  // 0 and 7 are both Sunday.
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

/** Why `expr` is not a 5-field cron expression, or null when it is. */
export function cronProblem(expr: string): string | null {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5)
    return `must have 5 fields (minute hour day-of-month month day-of-week), not ${fields.length}`;
  for (let i = 0; i < 5; i++) {
    const spec = FIELDS[i]!;
    for (const item of fields[i]!.split(',')) {
      const problem = itemProblem(item, spec);
      if (problem) return `${spec.name} field "${fields[i]}": ${problem}`;
    }
  }
  return null;
}

function itemProblem(item: string, spec: (typeof FIELDS)[number]): string | null {
  const [range, step, extra] = item.split('/');
  if (extra !== undefined) return 'more than one "/"';
  if (step !== undefined && !/^[1-9]\d*$/.test(step)) return `step "${step}" must be a positive number`;
  if (range === '*') return null;
  const bounds = (range ?? '').split('-');
  if (bounds.length > 2) return `"${range}" is not a value or range`;
  const values = bounds.map((b) => value(b, spec));
  if (values.some((v) => v === null)) return `"${range}" must be within ${spec.min}-${spec.max}`;
  if (values.length === 2 && values[0]! > values[1]!) return `range "${range}" is backwards`;
  return null;
}

function value(text: string, spec: (typeof FIELDS)[number]): number | null {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + (spec.name === 'month' ? 1 : 0);
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= spec.min && n <= spec.max ? n : null;
}
