import { ExprError } from './errors.ts';
import { type EvalContext, evalNode, locate } from './evaluate.ts';
import { sourceOffset, type Template, type TextPart, toTemplate } from './template.ts';
import { toJsonText, toText, type Value } from './values.ts';

/** How one `${}` of a JSON template is placed (decided from the JSON text around it). */
type Placement =
  /** Outside any string, e.g. `{"n": ${count}}`: the value's JSON. */
  | 'value'
  /** The whole of a string value, e.g. `{"n": "${count}"}`: the value's JSON, so it keeps its type. */
  | 'whole'
  /** Part of a longer string, or an object key: the value's text, escaped into the string. */
  | 'inline';

/**
 * Renders a JSON template (API bodies) and returns the parsed value. A `${}` that is the whole of a
 * JSON string keeps its type (`"${n}"` with n = 5 gives 5; an object stays an object); one inside a
 * longer string or a key is rendered as text and escaped; one outside strings is its JSON. Values
 * can never break out of their place (each is one JSON token or escaped string content), and the
 * result is valid JSON or an `invalid_json` ExprError pointing into the template.
 */
export function renderJson(template: string | Template, ctx: EvalContext): unknown {
  const t = toTemplate(template);
  const placements = placeExpressions(t);
  const chunks: Chunk[] = [];
  let out = '';
  let skipQuote = false;
  try {
    t.parts.forEach((part, i) => {
      if (part.kind === 'text') {
        const skip = skipQuote ? 1 : 0;
        chunks.push({ out: out.length, part, pos: part.pos, skip });
        out += part.text.slice(skip);
        skipQuote = false;
        return;
      }
      const value = evalNode(part.expr, ctx);
      const placement = placements[i];
      if (placement === 'inline') {
        chunks.push({ out: out.length, part: null, pos: part.pos, skip: 0 });
        out += JSON.stringify(toText(value, part.pos)).slice(1, -1);
        return;
      }
      if (placement === 'whole') {
        out = out.slice(0, -1); // the opening quote; the closing one is skipped with the next part
        skipQuote = true;
      }
      chunks.push({ out: out.length, part: null, pos: part.pos, skip: 0 });
      // Spaces keep the value one token: `${a}${b}` must not merge 1 and 2 into 12.
      out += ` ${toJsonText(value, part.pos)} `;
    });
  } catch (err) {
    throw locate(err, t.source);
  }
  const result = parseJson(out);
  if (result.ok) return result.value;
  throw new ExprError('invalid_json', result.reason, locateOutput(t, chunks, result.offset), t.source);
}

/** Where a stretch of the rendered text came from, to point JSON errors into the template. */
interface Chunk {
  /** Offset of the stretch in the rendered text. */
  out: number;
  /** The text part it copies, or null for a value (errors then point at the `${`). */
  part: TextPart | null;
  pos: number;
  /** Characters of the text part left out (a closing quote absorbed by a whole-string value). */
  skip: number;
}

function locateOutput(t: Template, chunks: Chunk[], offset: number): number {
  let chunk = chunks[0];
  for (const c of chunks) if (c.out <= offset) chunk = c;
  if (chunk === undefined) return 0;
  if (chunk.part === null) return chunk.pos;
  return sourceOffset(t, chunk.part, Math.min(offset - chunk.out + chunk.skip, chunk.part.text.length));
}

// Walks the text parts as JSON tokens (only strings matter) to decide where each `${}` sits.
function placeExpressions(t: Template): Array<Placement | undefined> {
  const placements: Array<Placement | undefined> = [];
  let inString = false;
  let stringEmpty = false;
  t.parts.forEach((part, i) => {
    if (part.kind === 'expr') {
      if (!inString) {
        placements[i] = 'value';
        return;
      }
      const next = t.parts[i + 1];
      const closes = next?.kind === 'text' && next.text.startsWith('"');
      const isKey = closes && /^"\s*:/.test(next.text);
      placements[i] = stringEmpty && closes && !isKey ? 'whole' : 'inline';
      stringEmpty = false;
      return;
    }
    const text = part.text;
    for (let k = 0; k < text.length; k++) {
      const ch = text[k];
      if (!inString) {
        if (ch === '"') {
          inString = true;
          stringEmpty = true;
        }
      } else if (ch === '\\') {
        if (k === text.length - 1) {
          // `"a\${x}"` would let the value's first character complete the escape.
          throw new ExprError(
            'invalid_json',
            'a backslash right before ${ would escape the value; write \\\\ for a backslash',
            sourceOffset(t, part, k),
            t.source,
          );
        }
        k++;
        stringEmpty = false;
      } else if (ch === '"') {
        inString = false;
      } else {
        stringEmpty = false;
      }
    }
  });
  return placements;
}

type ParseResult = { ok: true; value: Value } | { ok: false; reason: string; offset: number };

/** Strict RFC 8259 JSON, with the offset and a plain reason on failure (JSON.parse's messages differ
 *  between engines). Objects are plain; a `__proto__` key is an ordinary own property. */
export function parseJson(text: string): ParseResult {
  const p = new JsonParser(text);
  try {
    p.ws();
    const value = p.value(0);
    p.ws();
    if (p.i < text.length) p.fail('unexpected text after the end of the JSON value');
    return { ok: true, value };
  } catch (err) {
    if (err instanceof JsonFailure) return { ok: false, reason: err.reason, offset: err.offset };
    throw err;
  }
}

class JsonFailure {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {}
}

const MAX_JSON_DEPTH = 500;
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const JSON_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class JsonParser {
  i = 0;
  constructor(private readonly s: string) {}

  fail(reason: string, offset = this.i): never {
    throw new JsonFailure(reason, offset);
  }

  ws(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s[this.i]!)) this.i++;
  }

  value(depth: number): Value {
    if (depth > MAX_JSON_DEPTH) this.fail(`JSON nests more than ${MAX_JSON_DEPTH} levels`);
    const ch = this.s[this.i];
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    if (ch === '"') return this.string();
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return this.number();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    if (ch === undefined) this.fail('the JSON ends where a value should be');
    return this.fail(`expected a JSON value, found ${JSON.stringify(ch)}`);
  }

  private object(depth: number): Value {
    const obj: Record<string, Value> = {};
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return obj;
    }
    for (;;) {
      if (this.s[this.i] !== '"') this.fail('expected a property name in double quotes');
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail("expected ':' after the property name");
      this.i++;
      this.ws();
      const value = this.value(depth + 1);
      // Define, never assign: assigning `__proto__` would replace the prototype.
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
      this.ws();
      const ch = this.s[this.i++];
      if (ch === '}') return obj;
      if (ch !== ',') this.fail("expected ',' or '}' after a property value", this.i - 1);
      this.ws();
    }
  }

  private array(depth: number): Value {
    const list: Value[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return list;
    }
    for (;;) {
      list.push(this.value(depth + 1));
      this.ws();
      const ch = this.s[this.i++];
      if (ch === ']') return list;
      if (ch !== ',') this.fail("expected ',' or ']' after a list item", this.i - 1);
      this.ws();
    }
  }

  private string(): string {
    const start = this.i;
    let out = '';
    this.i++;
    for (;;) {
      const ch = this.s[this.i];
      if (ch === undefined) this.fail('this JSON string has no closing quote', start);
      if (ch === '"') break;
      if (ch < ' ') this.fail('a control character (such as a line break) must be escaped in a JSON string');
      if (ch === '\\') {
        const esc = this.s[this.i + 1] ?? '';
        if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 2, this.i + 6))) {
          out += String.fromCharCode(Number.parseInt(this.s.slice(this.i + 2, this.i + 6), 16));
          this.i += 6;
          continue;
        }
        if (!Object.hasOwn(JSON_ESCAPES, esc)) this.fail(`invalid escape \\${esc} in a JSON string`);
        out += JSON_ESCAPES[esc]!;
        this.i += 2;
        continue;
      }
      out += ch;
      this.i++;
    }
    this.i++;
    return out;
  }

  private number(): number {
    JSON_NUMBER.lastIndex = this.i;
    const m = JSON_NUMBER.exec(this.s);
    if (m === null) this.fail('invalid JSON number');
    const value = Number(m[0]);
    if (!Number.isFinite(value)) this.fail('this JSON number is too large');
    this.i += m[0].length;
    return value;
  }
}
