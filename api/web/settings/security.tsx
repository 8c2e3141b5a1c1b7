import type { SessionRow } from '../../../store/sessions.ts';
import { Csrf, PostButton, when } from '../kit/components.tsx';

/**
 * Where a person sees every browser signed in as them and ends any of them, and changes their
 * password (which ends every other session).
 */
export function SignInSecurity(props: {
  sessions: SessionRow[];
  currentSessionId: string | null;
  hasPassword: boolean;
  csrf: string;
}) {
  const others = props.sessions.filter((s) => s.id !== props.currentSessionId);
  return (
    <>
      <h2>Sign-in sessions</h2>
      <p class="muted">Browsers signed in as you. End any you do not recognise.</p>
      <ul class="plain" id="sessions">
        {props.sessions.map((s) => (
          <li>
            <strong>{s.id === props.currentSessionId ? 'This browser' : browserName(s.user_agent)}</strong>{' '}
            <span class="muted">
              signed in {when(s.created_at)} · ends {when(s.expires_at)}
            </span>{' '}
            {s.id === props.currentSessionId ? null : (
              <PostButton action={`/settings/sessions/${s.id}/end`} csrf={props.csrf} label="End" />
            )}
          </li>
        ))}
      </ul>
      {others.length > 1 ? (
        <PostButton action="/settings/sessions/end-others" csrf={props.csrf} label="End all other sessions" />
      ) : null}
      {props.hasPassword ? (
        <>
          <h2>Password</h2>
          <form method="post" action="/settings/password" class="card">
            <Csrf token={props.csrf} />
            <label for="current-password">Current password</label>
            <input
              id="current-password"
              name="current_password"
              type="password"
              autocomplete="current-password"
              required
            />
            <label for="new-password">New password (at least 12 characters)</label>
            <input
              id="new-password"
              name="new_password"
              type="password"
              autocomplete="new-password"
              minlength={12}
              required
            />
            <button type="submit">Change password and end other sessions</button>
          </form>
        </>
      ) : null}
    </>
  );
}

/** A short, readable name for a User-Agent string (enough to recognise a browser). */
function browserName(ua: string): string {
  if (ua === '') return 'Unknown browser';
  const browser = /(Edg|Firefox|Chrome|Safari)\/[\d.]+/.exec(ua)?.[1] ?? 'Browser';
  const os = /(Windows|Mac OS X|Android|iPhone|Linux)/.exec(ua)?.[1] ?? '';
  return `${browser === 'Edg' ? 'Edge' : browser}${os ? ` on ${os}` : ''}`;
}
