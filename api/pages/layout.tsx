import type { Child } from 'hono/jsx';

/** The shared page frame: readable on a laptop and a phone, no client framework. */
export function Layout(props: { title: string; children: Child; signedIn?: boolean }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Countersign`}</title>
        <style>{CSS}</style>
      </head>
      <body>
        <header>
          <a class="brand" href="/">
            Countersign
          </a>
          {props.signedIn ? (
            <form method="post" action="/logout" class="inline">
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

const CSS = `
:root { --fg:#1b1f24; --muted:#5b6470; --line:#d8dde3; --accent:#2450a6; --bg:#f7f8fa; --bad:#a3262a; }
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; justify-content:space-between; align-items:center; padding:.75rem 1.25rem; background:#fff; border-bottom:1px solid var(--line); }
.brand { font-weight:700; color:var(--fg); text-decoration:none; }
main { max-width:64rem; margin:0 auto; padding:1.5rem 1.25rem; }
form.card { max-width:24rem; background:#fff; border:1px solid var(--line); border-radius:8px; padding:1.25rem; }
label { display:block; margin:.75rem 0 .25rem; font-weight:600; }
input { width:100%; padding:.5rem; border:1px solid var(--line); border-radius:6px; font:inherit; }
button { margin-top:1rem; padding:.5rem 1rem; border:0; border-radius:6px; background:var(--accent); color:#fff; font:inherit; cursor:pointer; }
form.inline button { margin:0; }
.error { color:var(--bad); }
`;
