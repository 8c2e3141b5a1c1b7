import type { Child } from 'hono/jsx';
import type { ConnectedClient } from '../../../store/oauth.ts';
import type { PersonalTokenRow } from '../../../store/personal-tokens.ts';
import { Csrf, Flash, PostButton, when } from '../kit/components.tsx';

/** Personal access tokens (create, shown once, revoke) and connected AI clients (revoke). */
export function SettingsPage(props: {
  tokens: PersonalTokenRow[];
  clients: ConnectedClient[];
  csrf: string;
  /** A token just created: its secret, shown on this one response and never again. */
  created?: { name: string; secret: string } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
  /** Sign-in sessions and password (settings-security.tsx). */
  children?: Child;
}) {
  const live = props.tokens.filter((t) => t.revoked_at === null);
  return (
    <section>
      <h1>Settings</h1>
      <Flash notice={props.notice} error={props.error} />
      <h2>Personal access tokens</h2>
      <p class="muted">
        A token acts as you for the dashboards API (<code>Authorization: Bearer …</code>) and the REST API.
      </p>
      {props.created ? (
        <div class="warning" role="status">
          <p>
            Token <strong>{props.created.name}</strong> created. Copy it now: it is shown only once.
          </p>
          <p class="secret" id="new-token">
            {props.created.secret}
          </p>
        </div>
      ) : null}
      <form method="post" action="/settings/tokens" class="card">
        <Csrf token={props.csrf} />
        <label for="token-name">Name</label>
        <input id="token-name" name="name" required maxlength={200} placeholder="e.g. laptop scripts" />
        <label for="token-days">Expires after (days, empty for never)</label>
        <input id="token-days" name="expires_in_days" inputmode="numeric" pattern="[0-9]*" />
        <button type="submit">Create token</button>
      </form>
      {live.length === 0 ? <p class="muted">You have no active token.</p> : null}
      <ul class="plain">
        {live.map((t) => (
          <li>
            <strong>{t.name}</strong>{' '}
            <span class="muted">
              created {when(t.created_at)} · {t.expires_at ? `expires ${when(t.expires_at)}` : 'no expiry'} ·{' '}
              {t.last_used_at ? `last used ${when(t.last_used_at)}` : 'not used yet'}
            </span>{' '}
            <PostButton action={`/settings/tokens/${t.id}/revoke`} csrf={props.csrf} label="Revoke" />
          </li>
        ))}
      </ul>
      <h2>Connected AI clients</h2>
      <p class="muted">Applications you allowed to query databases as you through MCP.</p>
      {props.clients.length === 0 ? <p class="muted">No AI client is connected to your account.</p> : null}
      <ul class="plain">
        {props.clients.map((c) => (
          <li>
            <strong>{c.client_name}</strong>{' '}
            {c.kind === 'cimd' ? <span class="muted">published by {new URL(c.client_id).host} </span> : null}
            <span class="muted">
              connected {when(c.created_at)} ·{' '}
              {c.last_used_at ? `last used ${when(c.last_used_at)}` : 'not used yet'}
            </span>{' '}
            <PostButton
              action={`/settings/clients/${c.grant_id}/revoke`}
              csrf={props.csrf}
              label="Disconnect"
            />
          </li>
        ))}
      </ul>
      {props.children}
    </section>
  );
}
