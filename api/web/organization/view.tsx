// The Organization page (admins): API keys, agents and single sign-on, each created in
// the UI with its secret shown once.
import type { OrgAiClient } from '../../../store/ai-clients.ts';
import type { ApiKeyListing } from '../../../store/api-keys.ts';
import type { SsoConfigRow } from '../../../store/sso.ts';
import { Csrf, Flash, PostButton, when } from '../kit/components.tsx';

export interface AgentView {
  id: string;
  name: string;
  connected: boolean;
  revoked: boolean;
  last_seen_at: string | null;
  version: string | null;
}

export function OrganizationPage(props: {
  keys: ApiKeyListing[];
  /** The viewer may mark keys for x-act-as-user (a super admin; pages are always in person). */
  superAdmin: boolean;
  agents: AgentView[];
  sso: SsoConfigRow | null;
  aiClients: OrgAiClient[];
  aiDatabases: Array<{ id: string; name: string; aiEnabled: boolean }>;
  ssoRedirectUri: string;
  baseUrl: string;
  csrf: string;
  created?: { kind: 'key' | 'agent'; name: string; secret: string } | undefined;
  ssoErrors?: Record<string, string> | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const live = props.keys.filter((k) => !k.revoked_at);
  const sso = props.sso;
  const e = props.ssoErrors ?? {};
  return (
    <section>
      <h1>Organization</h1>
      <Flash notice={props.notice} error={props.error} />
      {props.created ? (
        <div class="warning" role="status">
          <p>
            {props.created.kind === 'key' ? 'API key' : 'Agent token for'}{' '}
            <strong>{props.created.name}</strong> created. Copy it now: it is shown only once.
          </p>
          <p class="secret" id="new-secret">
            {props.created.secret}
          </p>
          {props.created.kind === 'agent' ? (
            <p class="muted">
              Run inside the private network:{' '}
              <code>COUNTERSIGN_AGENT_TOKEN=… npx countersign agent --server {props.baseUrl}</code>
            </p>
          ) : null}
        </div>
      ) : null}

      <h2 id="api-keys">API keys</h2>
      <p class="muted">
        An API key (<code>x-api-key</code>) acts as its owner and never more: your key has your role, grants
        and data-protection policy, and stops working when you are disabled or deleted. For an automation,
        make a service account instead: its own role (member or admin), grants and policy, managed on the
        People, database and policy pages like a person's.
      </p>
      <form method="post" action="/organization/api-keys" id="api-key-form">
        <Csrf token={props.csrf} />
        <div class="row">
          <div>
            <label for="key-name">Name</label>
            <input id="key-name" name="name" required maxlength={200} placeholder="e.g. deploy pipeline" />
          </div>
          <fieldset>
            <legend>Owner</legend>
            <label>
              <input type="radio" name="owner" value="me" checked /> Me (acts as me)
            </label>
            <label>
              <input type="radio" name="owner" value="service_account" /> A new service account, role{' '}
              <select id="key-role" name="role" aria-label="Service account role">
                <option value="member">member</option>
                <option value="admin">admin</option>
              </select>
            </label>
          </fieldset>
          {props.superAdmin ? (
            <label>
              <input type="checkbox" name="act_as_allowed" value="true" /> May act for users (
              <code>x-act-as-user</code>, never to review)
            </label>
          ) : null}
        </div>
        <button type="submit">Create API key</button>
      </form>
      <ul class="plain" id="api-key-list">
        {live.length === 0 ? <li class="muted">No active API key.</li> : null}
        {live.map((k) => (
          <li data-key={k.id}>
            <strong>{k.name}</strong>{' '}
            <span class="key-owner">
              {k.owner_service_account
                ? `service account ${k.owner_name ?? ''} (${k.owner_role ?? ''})`
                : `owned by ${k.owner_email ?? 'nobody'} (${k.owner_role ?? ''})`}
              {k.owner_disabled ? ' · owner disabled: the key does not work' : ''}
              {k.act_as_allowed ? ' · may act for users' : ''}
            </span>{' '}
            <span class="muted">
              created {when(k.created_at)} ·{' '}
              {k.last_used_at ? `last used ${when(k.last_used_at)}` : 'never used'}
            </span>{' '}
            {props.superAdmin ? (
              <PostButton
                action={`/organization/api-keys/${k.id}/act-as`}
                csrf={props.csrf}
                label={k.act_as_allowed ? 'Forbid acting for users' : 'Allow acting for users'}
              />
            ) : null}{' '}
            <PostButton action={`/organization/api-keys/${k.id}/revoke`} csrf={props.csrf} label="Revoke" />
          </li>
        ))}
      </ul>

      <h2 id="agents">Agents</h2>
      <p class="muted">
        An agent runs inside a private network and relays connections to databases there over one outbound
        WebSocket. Pick it under “Reached through agent” when registering a database.
      </p>
      <form method="post" action="/organization/agents" class="row">
        <Csrf token={props.csrf} />
        <div>
          <label for="agent-name">Name</label>
          <input id="agent-name" name="name" required maxlength={100} placeholder="e.g. eu-west-office" />
        </div>
        <button type="submit">Register agent</button>
      </form>
      <ul class="plain" id="agent-list">
        {props.agents.filter((a) => !a.revoked).length === 0 ? <li class="muted">No agent.</li> : null}
        {props.agents
          .filter((a) => !a.revoked)
          .map((a) => (
            <li>
              <strong>{a.name}</strong>{' '}
              {a.connected ? (
                <span class="badge ok">connected</span>
              ) : (
                <span class="badge bad">not connected</span>
              )}{' '}
              <span class="muted">
                last seen {a.last_seen_at ? when(a.last_seen_at) : 'never'}
                {a.version ? ` · version ${a.version}` : ''}
              </span>{' '}
              <PostButton action={`/organization/agents/${a.id}/revoke`} csrf={props.csrf} label="Revoke" />
            </li>
          ))}
      </ul>

      <h2 id="ai-clients">AI clients</h2>
      <p class="muted">
        Applications people connected through MCP. Each acts as its person, read-only; here you can keep one
        to some databases, or disable it for everyone in the organization.
      </p>
      {props.aiClients.length === 0 ? <p class="muted">No AI client is connected yet.</p> : null}
      {props.aiClients.map((c) => (
        <form method="post" action="/organization/ai-clients" class="card wide">
          <Csrf token={props.csrf} />
          <input type="hidden" name="client_id" value={c.client_id} />
          <p>
            <strong>{c.client_name}</strong>{' '}
            {c.kind === 'cimd' ? <span class="muted">published by {new URL(c.client_id).host} </span> : null}
            <span class="muted">
              · {c.people} person(s) · {c.last_used_at ? `last used ${when(c.last_used_at)}` : 'not used yet'}
            </span>{' '}
            {c.disabled ? <span class="badge bad">disabled</span> : null}
          </p>
          <label class="check">
            <input type="checkbox" name="disabled" checked={c.disabled} /> Disabled for the whole organization
          </label>
          <label for={`dbs-${c.client_id}`}>Only these databases</label>
          <p class="muted small" id={`dbs-help-${c.client_id}`}>
            Select none to let this client reach every database where AI access is on (each person still only
            reaches what they may use). Select some to keep it to those. A database with AI off is not
            reachable by any client; turn AI on in its settings on the Databases page.
          </p>
          <select
            id={`dbs-${c.client_id}`}
            name="database_ids"
            aria-describedby={`dbs-help-${c.client_id}`}
            multiple
            size={Math.min(5, Math.max(2, props.aiDatabases.length))}
          >
            {props.aiDatabases.map((d) => (
              <option value={d.id} selected={c.database_ids?.includes(d.id) ?? false}>
                {d.name}
                {d.aiEnabled ? '' : ' (AI off)'}
              </option>
            ))}
          </select>
          <button type="submit" class="small">
            Save limits
          </button>
        </form>
      ))}

      <h2 id="sso">Single sign-on (OpenID Connect)</h2>
      <p class="muted">
        Register <code>{props.ssoRedirectUri}</code> as the redirect URI at your identity provider. People
        sign in with a verified email address; roles are changed on the People page.
      </p>
      <p class="muted">
        Only a super admin changes single sign-on, entering their password again: the identity provider
        decides who signs in as whom. A sign-in reaches an existing account only once linked: the person signs
        in with their password once, or the provider marks the email verified and it is in one of the domains
        below.
      </p>
      {e.form ? <p class="error">{e.form}</p> : null}
      <form method="post" action="/organization/sso" class="card wide">
        <Csrf token={props.csrf} />
        <label for="sso-issuer">Issuer URL</label>
        <input
          id="sso-issuer"
          name="issuer"
          value={sso?.issuer ?? ''}
          required
          placeholder="https://login.example.com"
        />
        {e.issuer ? <div class="error small">{e.issuer}</div> : null}
        <label for="sso-client">Client ID</label>
        <input id="sso-client" name="client_id" value={sso?.client_id ?? ''} required autocomplete="off" />
        {e.client_id ? <div class="error small">{e.client_id}</div> : null}
        <label for="sso-secret">Client secret {sso ? '(leave empty to keep the stored one)' : ''}</label>
        <input
          id="sso-secret"
          name="client_secret"
          type="password"
          autocomplete="new-password"
          required={!sso}
        />
        {e.client_secret ? <div class="error small">{e.client_secret}</div> : null}
        <label for="sso-role">People signing in for the first time</label>
        <select id="sso-role" name="provision_role">
          <option value="" selected={!sso?.provision_role}>
            are refused until an admin invites them
          </option>
          <option value="member" selected={sso?.provision_role === 'member'}>
            get an account as member
          </option>
          <option value="admin" selected={sso?.provision_role === 'admin'}>
            get an account as admin
          </option>
        </select>
        <label for="sso-claim">Role from a claim (optional), e.g. groups</label>
        <input id="sso-claim" name="role_claim" value={sso?.role_claim ?? ''} autocomplete="off" />
        {e.role_claim ? <div class="error small">{e.role_claim}</div> : null}
        <label for="sso-map">
          Claim values and the role they give, one per line: value = admin or member
        </label>
        <textarea id="sso-map" name="role_map" rows={3} spellcheck={false}>
          {Object.entries(sso?.role_map ?? {})
            .map(([k, r]) => `${k} = ${r}`)
            .join('\n')}
        </textarea>
        {e.role_map ? <div class="error small">{e.role_map}</div> : null}
        <p class="muted small">
          A new account takes the highest role any of its claim values maps to, else the role above. Later
          sign-ins keep whatever role an admin gives on the People page.
        </p>
        <label for="sso-domains">Email domains the organization owns (optional), e.g. example.com</label>
        <input id="sso-domains" name="domains" value={(sso?.domains ?? []).join(' ')} autocomplete="off" />
        {e.domains ? <div class="error small">{e.domains}</div> : null}
        <label class="check">
          <input type="checkbox" name="enabled" checked={sso?.enabled ?? true} /> Offer single sign-on on the
          sign-in page
        </label>
        <label for="sso-password">Your password</label>
        <input
          id="sso-password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
        />
        {e.current_password ? <div class="error small">{e.current_password}</div> : null}
        <button type="submit">Save single sign-on</button>
      </form>
      {sso ? (
        <form method="post" action="/organization/sso/delete" class="card wide">
          <Csrf token={props.csrf} />
          <label for="sso-delete-password">Your password</label>
          <input
            id="sso-delete-password"
            name="current_password"
            type="password"
            autocomplete="current-password"
            required
          />
          <button type="submit" class="bad">
            Turn single sign-on off and forget its settings
          </button>
        </form>
      ) : null}
    </section>
  );
}
