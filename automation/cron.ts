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

/** The values each field allows, expanded (day of week 7 folded onto 0). Assumes a valid expression. */
function allowed(expr: string): Array<{ set: Set<number>; star: boolean }> {
  return expr
    .trim()
    .split(/\s+/)
    .map((field, i) => {
      const spec = FIELDS[i]!;
      const set = new Set<number>();
      for (const item of field.split(',')) {
        const [range = '*', step = '1'] = item.split('/');
        const [lo, hi] =
          range === '*'
            ? [spec.min, spec.max]
            : (() => {
                const b = range.split('-').map((x) => value(x, spec)!);
                // "5/15" means from 5 to the end of the field, stepping 15.
                return [b[0]!, b[1] ?? (item.includes('/') ? spec.max : b[0]!)];
              })();
        for (let n = lo; n <= hi; n += Number(step)) set.add(i === 4 && n === 7 ? 0 : n);
      }
      return { set, star: field.startsWith('*') };
    });
}

/**
 * The cron strings of the Temporal schedule spec that fires when `expr` does under standard
 * (Vixie) cron. Temporal ANDs day of month and day of week, where standard cron ORs them when
 * both are restricted (neither starts with `*`): `0 12 1 * 1` means the 1st and every Monday, not
 * the Mondays that fall on a 1st. That case becomes two specs, one per day field, whose union
 * Temporal fires (a day that matches both fires once). Assumes a valid expression.
 */
export function temporalCronExpressions(expr: string): string[] {
  const [minute, hour, dom, month, dow] = expr.trim().split(/\s+/) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const normalized = [minute, hour, dom, month, dow].join(' ');
  if (dom.startsWith('*') || dow.startsWith('*')) return [normalized];
  return [`${minute} ${hour} ${dom} ${month} *`, `${minute} ${hour} * ${month} ${dow}`];
}

/**
 * The next `count` times (UTC) a valid 5-field cron expression fires after `from`, for the
 * editor's preview. Day of month and day of week are ORed when both are restricted, as in Vixie
 * cron (and the schedule, temporalCronExpressions). An expression that never fires (30
 * February) gives fewer.
 */
export function nextRuns(expr: string, from: Date, count: number): Date[] {
  const [minute, hour, dom, month, dow] = allowed(expr) as [
    ReturnType<typeof allowed>[number],
    ReturnType<typeof allowed>[number],
    ReturnType<typeof allowed>[number],
    ReturnType<typeof allowed>[number],
    ReturnType<typeof allowed>[number],
  ];
  const dayMatches = (t: Date) => {
    const d = dom.set.has(t.getUTCDate());
    const w = dow.set.has(t.getUTCDay());
    if (!dom.star && !dow.star) return d || w;
    return d && w;
  };
  const out: Date[] = [];
  const t = new Date(Math.floor(from.getTime() / 60_000) * 60_000 + 60_000);
  // Five years covers every schedule that fires at all (29 February included).
  const limit = from.getTime() + 5 * 366 * 86_400_000;
  while (out.length < count && t.getTime() < limit) {
    if (!month.set.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0, 0, 0);
    } else if (!dayMatches(t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0, 0, 0);
    } else if (!hour.set.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
    } else if (!minute.set.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
    } else {
      out.push(new Date(t));
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
    }
  }
  return out;
}
