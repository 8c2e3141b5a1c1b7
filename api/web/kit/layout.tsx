import type { Child } from 'hono/jsx';
import type { Role } from '../../../store/users.ts';

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
  | 'settings'
  | 'ai';

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
  { id: 'ai', label: 'Connect AI', href: '/settings/ai' },
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
  /** The session's CSRF token: sign-out is a POST like any other. */
  csrf?: string;
}) {
  const user = props.user;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Countersign`}</title>
        {/* Files, not inline: the Content-Security-Policy allows styles and scripts from 'self' only. */}
        <link rel="stylesheet" href="/assets/app.css" />
        <script src="/assets/app.js" defer />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
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
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
      </body>
    </html>
  );
}
