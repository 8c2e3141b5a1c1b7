import type { Expr } from './ast.ts';
import { type EvalContext, evalNode, locate } from './evaluate.ts';
import { parseEmbedded, parseExpression } from './parser.ts';
import { toText } from './values.ts';

/** Literal text of a template; `$${` in the source is the text `${`. */
export interface TextPart {
  kind: 'text';
  text: string;
  /** Offset of the part's first character in the template source. */
  pos: number;
}

/** A `${...}` of a template; `pos` is the offset of its `$`, `end` is just past its `}`. */
export interface ExprPart {
  kind: 'expr';
  expr: Expr;
  pos: number;
  end: number;
}

export type TemplatePart = TextPart | ExprPart;

/** A parsed template: text and `${...}` parts in order (never two text parts in a row). */
export interface Template {
  source: string;
  parts: TemplatePart[];
}

/**
 * Parses a template (a chat message, an API body, a query string): text with `${expression}` parts.
 * `$${` is the literal text `${`. Throws ExprError with the position of the faulty `${...}`.
 */
export function parseTemplate(source: string): Template {
  const parts: TemplatePart[] = [];
  let text = '';
  let textPos = 0;
  let i = 0;
  while (i < source.length) {
    const dollar = source.indexOf('$', i);
    if (dollar === -1) {
      text += source.slice(i);
      break;
    }
    text += source.slice(i, dollar);
    if (source.startsWith('$${', dollar)) {
      text += '${';
      i = dollar + 3;
    } else if (source.startsWith('${', dollar)) {
      if (text !== '') parts.push({ kind: 'text', text, pos: textPos });
      let parsed: { expr: Expr; end: number };
      try {
        parsed = parseEmbedded(source, dollar + 2);
      } catch (err) {
        throw locate(err, source);
      }
      parts.push({ kind: 'expr', expr: parsed.expr, pos: dollar, end: parsed.end });
      text = '';
      textPos = i = parsed.end;
    } else {
      text += '$';
      i = dollar + 1;
    }
  }
  if (text !== '') parts.push({ kind: 'text', text, pos: textPos });
  return { source, parts };
}

/** Accepts a template's source or a template parsed before. */
export function toTemplate(template: string | Template): Template {
  return typeof template === 'string' ? parseTemplate(template) : template;
}

/** Offset in the template source of character `index` of a text part's (unescaped) text. */
export function sourceOffset(template: Template, part: TextPart, index: number): number {
  let s = part.pos;
  let t = 0;
  while (t < index) {
    if (template.source.startsWith('$${', s)) {
      if (index - t < 2) return s + 1 + (index - t);
      t += 2;
      s += 3;
    } else {
      t++;
      s++;
    }
  }
  return s;
}

/**
 * Renders a text template (chat messages): each `${}` becomes the text form of its value: text as
 * it is, numbers and booleans as in JSON, null as `null`, lists and objects as compact JSON.
 */
export function renderText(template: string | Template, ctx: EvalContext): string {
  const t = toTemplate(template);
  let out = '';
  try {
    for (const part of t.parts)
      out += part.kind === 'text' ? part.text : toText(evalNode(part.expr, ctx), part.pos);
  } catch (err) {
    throw locate(err, t.source);
  }
  return out;
}

/** One reference of an expression or template, with its position for error messages. */
export interface Reference {
  kind: 'input' | 'step';
  name: string;
  position: number;
}

export interface References {
  /** Input names, each once, in order of first use. */
  inputs: string[];
  /** Step names, each once, in order of first use. */
  steps: string[];
  /** Every reference in source order. */
  references: Reference[];
}

/**
 * The inputs and steps an expression or template names, so the workflow API can check that a step
 * uses only declared inputs and earlier steps. A string must say whether it is an expression (a
 * condition, where bare names are references) or a template (where only `${}` is).
 */
export function collectReferences(parsed: Expr | Template): References;
export function collectReferences(source: string, kind: 'expression' | 'template'): References;
export function collectReferences(
  target: string | Expr | Template,
  kind?: 'expression' | 'template',
): References {
  const refs: References = { inputs: [], steps: [], references: [] };
  if (typeof target === 'string') {
    if (kind === undefined)
      throw new TypeError("collectReferences(source) needs kind 'expression' or 'template'");
    target = kind === 'expression' ? parseExpression(target) : parseTemplate(target);
  }
  if ('parts' in target) {
    for (const part of target.parts) if (part.kind === 'expr') walk(part.expr, refs);
  } else {
    walk(target, refs);
  }
  return refs;
}

function walk(node: Expr, refs: References): void {
  switch (node.kind) {
    case 'input':
    case 'step': {
      refs.references.push({ kind: node.kind, name: node.name, position: node.pos });
      const names = node.kind === 'input' ? refs.inputs : refs.steps;
      if (!names.includes(node.name)) names.push(node.name);
      return;
    }
    case 'member':
      walk(node.object, refs);
      return;
    case 'index':
      walk(node.object, refs);
      walk(node.index, refs);
      return;
    case 'not':
      walk(node.operand, refs);
      return;
    case 'compare':
    case 'logical':
      walk(node.left, refs);
      walk(node.right, refs);
      return;
    case 'literal':
      return;
  }
}
