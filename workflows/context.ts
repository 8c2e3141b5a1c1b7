// Building evaluation contexts and rendering templates inside the workflow (pure `expr/`).
import {
  collectReferences,
  type EvalContext,
  type StepState as ExprStepState,
  parseTemplate,
  renderText,
} from '../expr/index.ts';
import type { RunSnapshot, RunState, StepDefinition } from './types.ts';

/** Inputs and step outputs as expressions see them (SPEC.md 2.1 "Expression language"). */
export function fullContext(snapshot: RunSnapshot, state: RunState): EvalContext {
  const steps: Record<string, ExprStepState> = {};
  for (const s of state.steps) {
    const status =
      s.status === 'succeeded' || s.status === 'skipped' || s.status === 'failed' ? s.status : 'pending';
    steps[s.name] = status === 'succeeded' ? { status, output: s.output } : { status };
  }
  return { inputs: snapshot.inputs, steps };
}

/**
 * Only what a template refers to: activities receive this rather than every earlier output, so a
 * large query result is not copied into the history of each later step.
 */
export function contextFor(template: string, ctx: EvalContext): EvalContext {
  const refs = collectReferences(template, 'template');
  const inputs: Record<string, unknown> = {};
  const steps: Record<string, ExprStepState> = {};
  for (const name of refs.inputs) if (Object.hasOwn(ctx.inputs, name)) inputs[name] = ctx.inputs[name];
  for (const name of refs.steps) {
    const step = ctx.steps[name];
    if (step) steps[name] = step;
  }
  return { inputs, steps };
}

/** Renders a URL template: each `${}` value is percent-encoded so it stays one path or query part. */
export function renderUrl(source: string, ctx: EvalContext): string {
  const t = parseTemplate(source);
  let out = '';
  for (const part of t.parts) {
    out +=
      part.kind === 'text'
        ? part.text
        : encodeURIComponent(renderText({ source: t.source, parts: [part] }, ctx));
  }
  return out;
}

/** A failure's message for people: an activity failure's cause says what actually went wrong. */
export function messageOf(err: unknown): string {
  let e: unknown = err;
  // ActivityFailure → ApplicationFailure / TimeoutFailure: the innermost message is the useful one.
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The inputs without a value (a cron run's inputs that have no default) that `step` refers to,
 * in its condition or its action's templates: such a step cannot run, and says so.
 */
export function unsetInputsOf(step: StepDefinition, unset: readonly string[]): string[] {
  if (unset.length === 0) return [];
  const a = step.action;
  const sources: Array<[string, 'expression' | 'template']> = [];
  if (step.condition !== null) sources.push([step.condition, 'expression']);
  if (a.__type__ === 'query') sources.push([a.query, 'template']);
  if (a.__type__ === 'api') {
    sources.push([a.endpoint, 'template']);
    if (a.body !== null) sources.push([a.body, 'template']);
  }
  if (a.__type__ === 'chat' || a.__type__ === 'chat_reply') sources.push([a.message, 'template']);
  if (a.__type__ === 'condition') sources.push([a.expression, 'expression']);
  const used = new Set(sources.flatMap(([source, kind]) => collectReferences(source, kind).inputs));
  return unset.filter((name) => used.has(name));
}
