// A server-rendered confirmation step in front of every destructive form of the pages: the
// first POST answers a page that says what will happen, with the same fields and a "yes" button;
// only the second POST, carrying `_confirmed=yes`, reaches the handler. No script is needed, so
// it works under the strict CSP and on a phone.
import type { MiddlewareHandler } from 'hono';
import type { Role } from '../../../store/users.ts';
import { Csrf } from './components.tsx';
import type { PageContext, PageEnv } from './page-context.tsx';
import { render } from './page-context.tsx';

/** What the confirmation page says and where "Cancel" goes back to. */
export interface Confirmation {
  title: string;
  /** One sentence per consequence, most important first. */
  consequences: string[];
  button: string;
  back: string;
}

/** A destructive route and how to describe it; `describe` answers null to let the handler decide (e.g. not found). */
export interface ConfirmRule {
  path: string;
  /** Who may be told what the action would do: others go straight to the handler, which refuses. */
  roles?: readonly Role[];
  describe(c: PageContext, params: Record<string, string>): Promise<Confirmation | null>;
}

const CONFIRMED = '_confirmed';

/** Asks first, for every POST matching one of `rules` without `_confirmed=yes`. */
export function confirmDestructive(rules: ConfirmRule[]): MiddlewareHandler<PageEnv> {
  const compiled = rules.map((r) => ({ rule: r, ...patternOf(r.path) }));
  return async function askFirst(c, next) {
    if (c.req.method !== 'POST' || c.get('form')[CONFIRMED] === 'yes') return next();
    const path = new URL(c.req.url).pathname;
    for (const { rule, regex, names } of compiled) {
      const m = regex.exec(path);
      if (!m) continue;
      if (rule.roles && !rule.roles.includes(c.get('principal').role)) return next();
      const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? '')]));
      const said = await rule.describe(c, params);
      if (!said) return next();
      return render(
        c,
        null,
        said.title,
        <ConfirmPage said={said} action={path} fields={await fieldsOf(c)} csrf={c.get('csrfToken')} />,
      );
    }
    return next();
  };
}

function patternOf(path: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path.replace(/:(\w+)/g, (_, n: string) => {
    names.push(n);
    return '([^/]+)';
  });
  return { regex: new RegExp(`^${source}$`), names };
}

/** The posted fields, repeated ones included (FormData keeps them all), to be posted again unchanged. */
async function fieldsOf(c: PageContext): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of await c.req.formData()) if (typeof v === 'string' && k !== '_csrf') out.push([k, v]);
  return out;
}

/** A password is never written back into a page: it is asked again on the confirmation step. */
const isSecret = (name: string) => /password|secret/i.test(name);

function ConfirmPage(props: {
  said: Confirmation;
  action: string;
  fields: Array<[string, string]>;
  csrf: string;
}) {
  const { said } = props;
  const secrets = props.fields.filter(([k]) => isSecret(k)).map(([k]) => k);
  return (
    <section class="confirm">
      <h1>{said.title}</h1>
      <ul class="consequences">
        {said.consequences.map((line) => (
          <li>{line}</li>
        ))}
      </ul>
      <form method="post" action={props.action} class="card">
        <Csrf token={props.csrf} />
        {props.fields
          .filter(([k]) => !isSecret(k))
          .map(([k, v]) => (
            <input type="hidden" name={k} value={v} />
          ))}
        {secrets.map((k) => (
          <div class="field">
            <label for={`confirm-${k}`}>Your current password, again</label>
            <input id={`confirm-${k}`} name={k} type="password" required autocomplete="current-password" />
          </div>
        ))}
        <input type="hidden" name={CONFIRMED} value="yes" />
        <div class="row">
          <button type="submit" class="bad">
            {said.button}
          </button>
          <a class="button quiet" href={said.back}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
