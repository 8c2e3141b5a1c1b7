/**
 * The one error type of the expression language. Every failure (syntax, a missing reference, a type
 * mismatch, invalid JSON, an unsafe SQL template, a bad input value) is an ExprError with a `code`
 * from the closed set below, the offset in the source it points at, and a message a person can act
 * on. The `message` already names the line and column; `excerpt()` adds the source line and a caret.
 */
export type ExprErrorCode =
  /** The source is not valid expression or template syntax. */
  | 'syntax'
  /** Expressions nest too deeply (parentheses, `not`, values in the context). */
  | 'too_deep'
  /** `${name}` names no workflow input. */
  | 'unknown_input'
  /** `step.<name>` names no step of the run. */
  | 'unknown_step'
  /** The step was skipped, has not run yet, failed, or produced no output. */
  | 'step_unavailable'
  /** `.name` or `["name"]` on a value that has no such property. */
  | 'missing_property'
  /** `__proto__`: never readable. */
  | 'forbidden_property'
  /** An index that is out of range, negative, fractional, or of the wrong type. */
  | 'invalid_index'
  /** Member access or indexing on a value that has no members (a number, a string, null...). */
  | 'not_indexable'
  /** Operands that cannot be compared (a number with non-numeric text, ordering of booleans...). */
  | 'type_mismatch'
  /** `&&`, `||`, `not` or a condition met something other than true or false. */
  | 'not_boolean'
  /** A value in the context that is not JSON (undefined, a function, a bigint, NaN...). */
  | 'unsupported_value'
  /** A JSON template does not produce valid JSON. */
  | 'invalid_json'
  /** A `${}` in a SQL template sits inside a string literal, quoted identifier or comment. */
  | 'sql_quoted_reference'
  /** A SQL template contains a raw placeholder (`$1`, `?`, `:1`, `@p1`, `{p1:T}`) of its own. */
  | 'sql_raw_placeholder'
  /** A value that cannot be bound as one SQL parameter (a list, an object, NaN). */
  | 'sql_unbindable_value'
  /** A workflow input value that does not match its declared type. */
  | 'invalid_input';

export class ExprError extends Error {
  override name = 'ExprError';
  /** What went wrong, without the location (the `message` adds the location). */
  readonly reason: string;

  constructor(
    readonly code: ExprErrorCode,
    reason: string,
    /** Offset (0-based, UTF-16 code units) in `source` the error points at. */
    readonly position: number,
    /** The expression or template text the position refers to ('' when unknown). */
    readonly source: string,
  ) {
    super(source === '' ? reason : `${reason} (${describeLocation(source, position)})`);
    this.reason = reason;
  }

  /** 1-based line of `position`. */
  get line(): number {
    return lineAndColumn(this.source, this.position).line;
  }

  /** 1-based column of `position` within its line. */
  get column(): number {
    return lineAndColumn(this.source, this.position).column;
  }

  /** The source line the error points at with a caret under the position, for logs and the CLI. */
  excerpt(): string {
    const { line, column } = lineAndColumn(this.source, this.position);
    const text = this.source.split('\n')[line - 1] ?? '';
    return `${text}\n${' '.repeat(Math.max(0, column - 1))}^`;
  }

  /** The same error located in `source`; used when an error raised deep inside evaluation reaches the
   *  function that knows which source text it came from. */
  withSource(source: string, offset = 0): ExprError {
    return new ExprError(this.code, this.reason, this.position + offset, source);
  }

  toJSON(): { code: ExprErrorCode; message: string; position: number } {
    return { code: this.code, message: this.message, position: this.position };
  }
}

/** A workflow input value that does not fit its declared type (code `invalid_input`). */
export class InputError extends ExprError {
  override name = 'InputError';

  constructor(
    reason: string,
    /** The input's key, when the caller named it. */
    readonly input: string | undefined,
  ) {
    super('invalid_input', reason, 0, '');
  }
}

function lineAndColumn(source: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(position, 0), source.length);
  for (let i = 0; i < end; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** "column 7", or "line 2, column 3" when the source has several lines. */
export function describeLocation(source: string, position: number): string {
  const { line, column } = lineAndColumn(source, position);
  return source.includes('\n') ? `line ${line}, column ${column}` : `column ${column}`;
}
