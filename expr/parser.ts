import type { CompareOp, Expr } from './ast.ts';
import { ExprError } from './errors.ts';
import { Lexer, type Token } from './lexer.ts';

/** Nesting limit for parentheses, `${...}`, indexes and `not`: keeps recursion bounded. */
export const MAX_NESTING = 100;

const COMPARE_OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

/**
 * Parses an expression (a step condition or a condition action), e.g.
 * `${step.q.output.num_rows} > 5 && ${approved}`. References may be written with or without `${}`.
 * Throws ExprError (code `syntax` or `too_deep`) pointing at the offending character.
 *
 * Precedence, loosest first: `||`, `&&`, `not`/`!`, comparisons (which do not chain), then member
 * access and indexing. See expr/README.md.
 */
export function parseExpression(source: string): Expr {
  try {
    const parser = new Parser(source, 0);
    const expr = parser.parseOr();
    parser.expectEnd();
    expr.source = source;
    return expr;
  } catch (err) {
    throw err instanceof ExprError && err.source === '' ? err.withSource(source) : err;
  }
}

/** Parses the expression of a template's `${...}` that starts at `start` (just after `${`);
 *  returns it and the offset just past the closing `}`. Errors are left without a source. */
export function parseEmbedded(source: string, start: number): { expr: Expr; end: number } {
  const parser = new Parser(source, start);
  const expr = parser.parseOr();
  const end = parser.expectClosingBrace(start - 2);
  return { expr, end };
}

class Parser {
  private readonly lexer: Lexer;
  private token: Token;
  private depth = 0;

  constructor(source: string, start: number) {
    this.lexer = new Lexer(source, start);
    this.token = this.lexer.next();
  }

  parseOr(): Expr {
    let left = this.parseAnd();
    while (this.isPunct('||')) {
      const pos = this.advance().pos;
      left = { kind: 'logical', op: '||', left, right: this.parseAnd(), pos };
    }
    return left;
  }

  expectEnd(): void {
    if (this.token.kind !== 'eof') throw this.unexpected('', 'after the end of the expression');
  }

  expectClosingBrace(open: number): number {
    if (this.token.kind === 'eof') {
      throw new ExprError('syntax', `this \${ has no closing }`, open, '');
    }
    if (!this.isPunct('}')) throw this.unexpected(`'}' to close the \${`);
    return this.token.end;
  }

  private parseAnd(): Expr {
    let left = this.parseNot();
    while (this.isPunct('&&')) {
      const pos = this.advance().pos;
      left = { kind: 'logical', op: '&&', left, right: this.parseNot(), pos };
    }
    return left;
  }

  // `not` binds looser than comparisons: `not a == b` is `not (a == b)`. For booleans `!a == b`
  // means the same either way, and for anything else `(!a)` would be a type error.
  private parseNot(): Expr {
    if (this.isPunct('!') || this.isName('not')) {
      const pos = this.advance().pos;
      this.enter(pos);
      const operand = this.parseNot();
      this.depth--;
      return { kind: 'not', operand, pos };
    }
    return this.parseCompare();
  }

  private parseCompare(): Expr {
    const left = this.parsePostfix();
    if (!(this.token.kind === 'punct' && COMPARE_OPS.has(this.token.text))) return left;
    const opToken = this.advance();
    const right = this.parsePostfix();
    if (this.token.kind === 'punct' && COMPARE_OPS.has(this.token.text)) {
      throw new ExprError(
        'syntax',
        `comparisons do not chain; write a ${opToken.text} b && b ${this.token.text} c`,
        this.token.pos,
        '',
      );
    }
    return { kind: 'compare', op: opToken.text as CompareOp, left, right, pos: opToken.pos };
  }

  private parsePostfix(): Expr {
    let expr = this.parsePrimary();
    for (;;) {
      if (this.isPunct('.')) {
        this.advance();
        const name = this.expectName('a property name after "."');
        expr = { kind: 'member', object: expr, name: guardName(name), pos: name.pos };
      } else if (this.isPunct('[')) {
        const pos = this.advance().pos;
        this.enter(pos);
        const index = this.parseOr();
        this.depth--;
        this.expectPunct(']', "']' to close the index");
        if (index.kind === 'literal' && index.value === '__proto__') guardName({ text: '__proto__', pos });
        expr = { kind: 'index', object: expr, index, pos };
      } else {
        return expr;
      }
    }
  }

  private parsePrimary(): Expr {
    const tok = this.token;
    if (tok.kind === 'number' || tok.kind === 'string') {
      this.advance();
      return { kind: 'literal', value: tok.value, pos: tok.pos };
    }
    if (tok.kind === 'name') {
      this.advance();
      switch (tok.text) {
        case 'true':
          return { kind: 'literal', value: true, pos: tok.pos };
        case 'false':
          return { kind: 'literal', value: false, pos: tok.pos };
        case 'null':
          return { kind: 'literal', value: null, pos: tok.pos };
        case 'step':
          return this.stepReference(tok.pos);
        case 'not':
          throw new ExprError(
            'syntax',
            "'not' applies to a whole comparison here; wrap it in parentheses, e.g. a == (not b)",
            tok.pos,
            '',
          );
        default:
          return { kind: 'input', name: tok.text, pos: tok.pos };
      }
    }
    if (this.isPunct('(') || this.isPunct('${')) {
      const open = this.advance();
      this.enter(open.pos);
      const inner = this.parseOr();
      this.depth--;
      if (open.text === '(') this.expectPunct(')', "')' to close the '('");
      else this.expectPunct('}', "'}' to close the ${");
      return inner;
    }
    throw this.unexpected('a value or a reference');
  }

  // step.<name>.output, or step["any name"].output for names that are not identifiers.
  private stepReference(pos: number): Expr {
    const form = 'a step reference has the form step.<name>.output';
    let name: string;
    if (this.isPunct('.')) {
      this.advance();
      name = this.expectName(`the step's name (${form})`).text;
    } else if (this.isPunct('[')) {
      this.advance();
      const tok = this.token;
      if (tok.kind !== 'string') throw this.unexpected(`a quoted step name (${form})`);
      this.advance();
      this.expectPunct(']', "']' after the step name");
      name = tok.value as string;
    } else {
      throw this.unexpected(`'.' after 'step' (${form})`);
    }
    this.expectPunct('.', `'.output' after the step name (${form})`);
    const output = this.expectName(`'output' (${form})`);
    if (output.text !== 'output') {
      throw new ExprError('syntax', `expected 'output' after the step name (${form})`, output.pos, '');
    }
    return { kind: 'step', name, pos };
  }

  private enter(pos: number): void {
    if (++this.depth > MAX_NESTING) {
      throw new ExprError('too_deep', `expressions may nest at most ${MAX_NESTING} levels`, pos, '');
    }
  }

  private advance(): Token {
    const tok = this.token;
    this.token = this.lexer.next();
    return tok;
  }

  private isPunct(text: string): boolean {
    return this.token.kind === 'punct' && this.token.text === text;
  }

  private isName(text: string): boolean {
    return this.token.kind === 'name' && this.token.text === text;
  }

  private expectPunct(text: string, what: string): Token {
    if (!this.isPunct(text)) throw this.unexpected(what);
    return this.advance();
  }

  private expectName(what: string): Token {
    if (this.token.kind !== 'name') throw this.unexpected(what);
    return this.advance();
  }

  /** "expected X, found Y", or "unexpected Y after ..." when `expected` is ''. */
  private unexpected(expected: string, after = ''): ExprError {
    const tok = this.token;
    if (tok.kind === 'name' && (tok.text === 'and' || tok.text === 'or')) {
      const op = tok.text === 'and' ? '&&' : '||';
      return new ExprError('syntax', `use '${op}' instead of '${tok.text}'`, tok.pos, '');
    }
    const reason =
      expected === ''
        ? `unexpected ${describeToken(tok)} ${after}`
        : `expected ${expected}, found ${describeToken(tok)}`;
    return new ExprError('syntax', reason, tok.pos, '');
  }
}

// `__proto__` is refused outright; every other name is read as an own property only (evaluate.ts).
function guardName(name: { text: string; pos: number }): string {
  if (name.text === '__proto__') {
    throw new ExprError('forbidden_property', "the property '__proto__' cannot be read", name.pos, '');
  }
  return name.text;
}

function describeToken(tok: Token): string {
  switch (tok.kind) {
    case 'eof':
      return 'end of input';
    case 'number':
      return `number ${tok.value}`;
    case 'string':
      return `string ${JSON.stringify(tok.value)}`;
    case 'name':
      return `name '${tok.text}'`;
    default:
      return `'${tok.text}'`;
  }
}
