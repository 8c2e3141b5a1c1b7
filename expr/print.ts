import { type Expr, isIdentifier } from './ast.ts';

// Binding strength, loosest first; a child printed where a tighter form is required gets parentheses.
const OR = 1;
const AND = 2;
const NOT = 3;
const COMPARE = 4;
const POSTFIX = 5;

/**
 * Prints an expression in canonical form: references without `${}`, `not` for negation, double-quoted
 * strings, and only the parentheses precedence requires. `parseExpression(printExpression(e))` gives
 * back `e` (positions aside) for every tree `parseExpression` can produce.
 */
export function printExpression(ast: Expr): string {
  return print(ast, OR);
}

function print(node: Expr, min: number): string {
  let text: string;
  let level: number;
  switch (node.kind) {
    case 'literal':
      return printLiteral(node.value);
    case 'input':
      return node.name;
    case 'step':
      return isIdentifier(node.name) ? `step.${node.name}.output` : `step[${printString(node.name)}].output`;
    case 'member':
      return `${print(node.object, POSTFIX)}.${node.name}`;
    case 'index':
      return `${print(node.object, POSTFIX)}[${print(node.index, OR)}]`;
    case 'not':
      text = `not ${print(node.operand, NOT)}`;
      level = NOT;
      break;
    case 'compare':
      text = `${print(node.left, POSTFIX)} ${node.op} ${print(node.right, POSTFIX)}`;
      level = COMPARE;
      break;
    case 'logical':
      level = node.op === '||' ? OR : AND;
      text = `${print(node.left, level)} ${node.op} ${print(node.right, level + 1)}`;
      break;
  }
  return level < min ? `(${text})` : text;
}

function printLiteral(value: string | number | boolean | null): string {
  if (typeof value === 'string') return printString(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return String(value);
}

// JSON string syntax is a subset of the language's; `${` must be escaped because a string literal
// may not contain a reference.
function printString(value: string): string {
  return JSON.stringify(value).replaceAll('${', '\\${');
}
