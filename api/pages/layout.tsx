import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { Role } from '../../store/users.ts';

/** The signed-in person a page is drawn for: the navigation and the sign-out form need them. */
export interface ShellUser {
  email: string;
  role: Role;
}

export type Section =
  | 'dashboards'
  | 'console'
  | 'databases'
  | 'reviews'
  | 'workflows'
  | 'runs'
  | 'audit'
  | 'people'
  | 'organization'
  | 'settings';

const SECTIONS: Array<{ id: Section; label: string; href: string; adminOnly?: boolean }> = [
  { id: 'dashboards', label: 'Dashboards', href: '/dashboards' },
  { id: 'console', label: 'Query console', href: '/console' },
  { id: 'databases', label: 'Databases', href: '/databases' },
  { id: 'reviews', label: 'Reviews', href: '/reviews' },
  { id: 'workflows', label: 'Workflows', href: '/workflows' },
  { id: 'runs', label: 'Workflow runs', href: '/runs' },
  { id: 'audit', label: 'Audit log', href: '/audit', adminOnly: true },
  { id: 'people', label: 'People', href: '/people', adminOnly: true },
  { id: 'organization', label: 'Organization', href: '/organization', adminOnly: true },
  { id: 'settings', label: 'Settings', href: '/settings' },
];

/**
 * The shared page frame: server-rendered, one small stylesheet, no client framework. Readable on
 * a laptop and a phone (the navigation wraps; wide tables scroll inside their own box).
 * `user` draws the app navigation; `signedIn` alone (OAuth pages) just offers sign-out.
 */
export function Layout(props: {
  title: string;
  children: Child;
  signedIn?: boolean;
  user?: ShellUser;
  active?: Section;
  /** The session's CSRF token: sign-out is a POST like any other (issue 18.5). */
  csrf?: string;
}) {
  const user = props.user;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Countersign`}</title>
        {/* raw: JSX escapes text, and an escaped ">" breaks every child selector (.row > *). */}
        <style>{raw(CSS)}</style>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">
            Countersign
          </a>
          {user ? (
            <nav aria-label="Main">
              {SECTIONS.filter((s) => !s.adminOnly || user.role !== 'member').map((s) => (
                <a
                  href={s.href}
                  class={s.id === props.active ? 'on' : ''}
                  aria-current={s.id === props.active ? 'page' : undefined}
                >
                  {s.label}
                </a>
              ))}
            </nav>
          ) : null}
          {user || props.signedIn ? (
            <form method="post" action="/logout" class="inline who">
              {props.csrf ? <input type="hidden" name="_csrf" value={props.csrf} /> : null}
              {user ? <span class="muted">{user.email}</span> : null}
              <button type="submit" class="quiet">
                Sign out
              </button>
            </form>
          ) : null}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

const CSS = `
:root { --fg:#1b1f24; --muted:#5b6470; --line:#d8dde3; --accent:#2450a6; --bg:#f7f8fa; --bad:#a3262a; --ok:#1f7a3a; --warn:#8a5a00; }
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); }
header.top { display:flex; flex-wrap:wrap; gap:.5rem 1.25rem; align-items:center; padding:.6rem 1.25rem; background:#fff; border-bottom:1px solid var(--line); }
.brand { font-weight:700; color:var(--fg); text-decoration:none; }
nav { display:flex; flex-wrap:wrap; gap:.25rem; flex:1; }
nav a { padding:.3rem .6rem; border-radius:6px; color:var(--fg); text-decoration:none; }
nav a.on, nav a:hover { background:#e8eefb; color:var(--accent); }
form.who { display:flex; gap:.75rem; align-items:center; margin-left:auto; }
main { max-width:72rem; margin:0 auto; padding:1.25rem; }
h1 { font-size:1.5rem; margin:.25rem 0 1rem; }
h2 { font-size:1.15rem; margin:1.5rem 0 .5rem; }
.card, form.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:1rem 1.25rem; margin:0 0 1rem; }
form.card { max-width:28rem; }
.card > h2:first-child { margin-top:.25rem; }
.wide { max-width:none !important; }
label { display:block; margin:.6rem 0 .2rem; font-weight:600; }
input, select, textarea { width:100%; padding:.45rem; border:1px solid var(--line); border-radius:6px; font:inherit; background:#fff; }
textarea { font-family:ui-monospace, monospace; min-height:7rem; }
input[type=checkbox] { width:auto; }
label.check { display:flex; gap:.5rem; align-items:center; font-weight:400; }
button { margin-top:.75rem; padding:.45rem .9rem; border:0; border-radius:6px; background:var(--accent); color:#fff; font:inherit; cursor:pointer; }
button.quiet { background:none; color:var(--accent); border:1px solid var(--line); }
button.bad { background:var(--bad); color:#fff; }
button.deny { background:#fff; color:var(--bad); border:2px solid var(--bad); }
button.allow { font-weight:600; }
.sr-only { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
details.inline { display:inline-block; }
a.button { display:inline-block; padding:.45rem .9rem; border-radius:6px; background:var(--accent); color:#fff; text-decoration:none; }
form.card.wide { max-width:46rem; }
fieldset { border:1px solid var(--line); border-radius:8px; margin:.75rem 0; padding:.5rem 1rem .75rem; }
legend { font-weight:600; padding:0 .3rem; }
.small { font-size:.85rem; }
summary.bad { color:var(--bad); }
details > summary { cursor:pointer; margin:.4rem 0; }
pre.diff div { white-space:pre-wrap; }
.diff-added { background:#e6f4ea; color:#14532d; }
.diff-removed { background:#fdecea; color:#7f1d1d; text-decoration:line-through; }
.conversation { border-left:3px solid var(--line); padding-left:.75rem; margin:.5rem 0; }
/* On a phone a wide table becomes one card per row, each cell labelled: actions stay reachable. */
@media (max-width: 640px) {
  table.stack thead { display:none; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display:block; width:auto; }
  table.stack tr { border-bottom:1px solid var(--line); padding:.4rem 0; }
  table.stack td { border:0; padding:.2rem .6rem; }
  table.stack td[data-label]::before { content:attr(data-label); display:block; font-size:.8rem; color:var(--muted); }
}
details.inline summary { cursor:pointer; color:var(--bad); }
button.small { margin:0; padding:.2rem .6rem; font-size:.9rem; }
form.inline { display:inline; }
form.inline button { margin:0; }
.row { display:flex; flex-wrap:wrap; gap:.75rem; align-items:flex-end; }
.row > * { flex:1 1 12rem; }
.row > button, .row > .fit { flex:0 0 auto; }
.error, .bad { color:var(--bad); }
.muted { color:var(--muted); }
.notice { background:#eef6ee; border:1px solid #b9dcc0; border-radius:6px; padding:.5rem .75rem; }
.warning { background:#fff6e0; border:1px solid #ecd39b; border-radius:6px; padding:.5rem .75rem; }
.scroll { overflow-x:auto; background:#fff; border:1px solid var(--line); border-radius:8px; }
.scroll.tall { max-height:70vh; overflow:auto; }
.result-table thead th { position:sticky; top:0; background:#f0f2f5; z-index:1; }
.result-table td { white-space:nowrap; max-width:40ch; overflow:hidden; text-overflow:ellipsis; }
.result-table td.num { text-align:right; font-variant-numeric:tabular-nums; }
.result-bar button { margin:0 0 0 .5rem; }
table { border-collapse:collapse; width:100%; font-size:.95rem; }
th, td { text-align:left; padding:.4rem .6rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f2f5; font-weight:600; white-space:nowrap; }
td code, pre { font-family:ui-monospace, monospace; font-size:.88rem; }
pre { white-space:pre-wrap; word-break:break-word; margin:0; }
.badge { display:inline-block; padding:0 .45rem; border-radius:999px; font-size:.8rem; border:1px solid var(--line); background:#fff; white-space:nowrap; }
.badge.ok { color:var(--ok); border-color:#b9dcc0; }
.badge.bad { color:var(--bad); border-color:#e6b7b9; }
.badge.warn { color:var(--warn); border-color:#ecd39b; }
ul.plain { list-style:none; padding:0; margin:0; }
ul.plain li { padding:.5rem 0; border-bottom:1px solid var(--line); }
.actions { display:flex; flex-wrap:wrap; gap:.4rem; align-items:center; }
.actions button { margin:0; }
td .actions form { margin:0; }
form .actions { margin-top:.75rem; }
.secret { font-family:ui-monospace, monospace; word-break:break-all; background:#fff6e0; padding:.5rem; border-radius:6px; }
@media (max-width: 40rem) {
  main { padding:.75rem; }
  th, td { padding:.35rem .45rem; }
  nav { order:3; flex-basis:100%; }
}
`;
