// Checks of a whole definition that one field's schema cannot make: unique names, references only
// to declared inputs and earlier steps, chat replies to chat steps, expressions that parse.
import type { FieldError } from '../core/errors.ts';
import {
  collectReferences,
  ExprError,
  type InputDefinition,
  InputError,
  parseExpression,
  parseInputValue,
  parseTemplate,
  type References,
} from '../expr/index.ts';
import { cronProblem } from './cron.ts';

interface StepLike {
  name: string;
  condition: string | null;
  action: { __type__: string } & Record<string, unknown>;
}

/** Every problem of the definition, each naming its field; empty when the definition is sound. */
export function definitionProblems(def: {
  cron_schedule: string | null;
  inputs: readonly InputDefinition[];
  steps: readonly StepLike[];
}): FieldError[] {
  const errors: FieldError[] = [];
  if (def.cron_schedule !== null) {
    const problem = cronProblem(def.cron_schedule);
    if (problem) errors.push({ path: 'cron_schedule', message: problem });
  }
  const inputKeys = new Set<string>();
  def.inputs.forEach((input, i) => {
    if (inputKeys.has(input.key))
      errors.push({ path: `inputs.${i}.key`, message: `duplicate input ${input.key}` });
    inputKeys.add(input.key);
    if (input.default !== undefined && input.default !== null) {
      try {
        parseInputValue(input.type, input.default, { fromText: false, name: input.key });
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        errors.push({ path: `inputs.${i}.default`, message: err.reason });
      }
    }
  });
  const earlier = new Map<string, string>(); // step name → action type
  def.steps.forEach((step, i) => {
    const at = `steps.${i}`;
    if (earlier.has(step.name))
      errors.push({ path: `${at}.name`, message: `duplicate step name ${step.name}` });
    const check = (path: string, source: string, kind: 'expression' | 'template') => {
      let refs: References;
      try {
        refs =
          kind === 'expression'
            ? collectReferences(parseExpression(source))
            : collectReferences(parseTemplate(source));
      } catch (err) {
        if (!(err instanceof ExprError)) throw err;
        errors.push({ path, message: err.message });
        return;
      }
      for (const name of refs.inputs) {
        if (!inputKeys.has(name)) errors.push({ path, message: `unknown input ${name}` });
      }
      for (const name of refs.steps) {
        if (!earlier.has(name)) errors.push({ path, message: `step ${name} does not come before this step` });
      }
    };
    if (step.condition !== null) check(`${at}.condition`, step.condition, 'expression');
    const a = step.action;
    for (const [field, kind] of TEMPLATE_FIELDS[a.__type__] ?? []) {
      const source = a[field];
      if (typeof source === 'string') check(`${at}.action.${field}`, source, kind);
    }
    if (a.__type__ === 'chat_reply') {
      const target = earlier.get(String(a.step_name));
      if (target !== 'chat') {
        errors.push({
          path: `${at}.action.step_name`,
          message:
            target === undefined
              ? `step ${String(a.step_name)} does not come before this step`
              : `step ${String(a.step_name)} is a ${target} step, not a chat step`,
        });
      }
    }
    if (!earlier.has(step.name)) earlier.set(step.name, a.__type__);
  });
  return errors;
}

/**
 * What the editor points out without refusing it: a schedule on a workflow with inputs that have
 * no default (a scheduled run gets no value for them; a step that uses one fails when it runs).
 */
export function definitionWarnings(def: {
  cron_schedule: string | null;
  inputs: readonly InputDefinition[];
}): FieldError[] {
  if (def.cron_schedule === null || def.cron_schedule.trim() === '') return [];
  const missing = def.inputs.filter((x) => x.default === undefined || x.default === null).map((x) => x.key);
  if (missing.length === 0) return [];
  return [
    {
      path: 'cron_schedule',
      message: `scheduled runs get no value for ${missing.join(', ')} (no default): a step that uses one will fail`,
    },
  ];
}

/** The fields of each action that are templates (or, for conditions, an expression). */
const TEMPLATE_FIELDS: Record<string, Array<[string, 'expression' | 'template']>> = {
  query: [['query', 'template']],
  api: [
    ['endpoint', 'template'],
    ['body', 'template'],
  ],
  chat: [['message', 'template']],
  chat_reply: [['message', 'template']],
  condition: [['expression', 'expression']],
};
