import type { Role, UserRow } from '../../../store/users.ts';
import { Csrf, Flash, PostButton, when } from '../kit/components.tsx';

const ROLE_LABEL: Record<Role, string> = { super_admin: 'Super admin', admin: 'Admin', member: 'Member' };

/**
 * People of the organization (admins): invite with a one-time link, change role, disable,
 * enable, delete. A link is shown on the one response that created it.
 */
export function PeoplePage(props: {
  people: UserRow[];
  me: string;
  /** Admins manage members and admins; super admins also super admins. */
  canManageSuperAdmins: boolean;
  csrf: string;
  link?: { email: string; url: string; expiresAt: Date } | undefined;
  /** Links go by e-mail; otherwise they are shown once, to pass on by hand. */
  mailConfigured: boolean;
  notice?: string | undefined;
  error?: string | undefined;
  /** The invitation as typed, kept when it was refused. */
  invite?: { email: string; name: string; role: string } | undefined;
}) {
  const roles: Role[] = props.canManageSuperAdmins ? ['member', 'admin', 'super_admin'] : ['member', 'admin'];
  return (
    <section>
      <h1>People</h1>
      <Flash notice={props.notice} error={props.error} />
      {props.link ? (
        <div class="warning" role="status">
          <p>
            Send this one-time link to <strong>{props.link.email}</strong> to choose a password. It works
            once, until <strong id="setup-link-expiry">{when(props.link.expiresAt)}</strong>, and is not shown
            again.
          </p>
          <p class="secret" id="setup-link">
            {props.link.url}
          </p>
          <button type="button" class="small" data-copy-from="setup-link">
            Copy link
          </button>
        </div>
      ) : null}
      {props.mailConfigured ? null : (
        <p class="muted small">
          No mail server is configured (SMTP_URL): invitation and password links appear here once, to pass on
          yourself.
        </p>
      )}
      <form method="post" action="/people" class="card">
        <h2>Invite someone</h2>
        <Csrf token={props.csrf} />
        <label for="invite-email">Email</label>
        <input
          id="invite-email"
          name="email"
          type="email"
          required
          maxlength={320}
          autocomplete="off"
          value={props.invite?.email ?? ''}
        />
        <label for="invite-name">Name (optional)</label>
        <input
          id="invite-name"
          name="name"
          maxlength={200}
          autocomplete="off"
          value={props.invite?.name ?? ''}
        />
        <label for="invite-role">Role</label>
        <select id="invite-role" name="role">
          {roles.map((r) => (
            <option value={r} selected={r === (props.invite?.role ?? 'member')}>
              {ROLE_LABEL[r]}
            </option>
          ))}
        </select>
        <p class="muted">
          Members query what they are granted; admins also register databases and manage people, grants and
          policies; super admins see every database and may bypass reviews where a database allows it.
        </p>
        <button type="submit">Invite</button>
      </form>
      <div class="scroll">
        <table class="people stack">
          <thead>
            <tr>
              <th>Person</th>
              <th>Role</th>
              <th>Status</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {props.people.map((u) => {
              const self = u.id === props.me;
              const locked = u.role === 'super_admin' && !props.canManageSuperAdmins;
              return (
                <tr id={`person-${u.id}`}>
                  <td data-label="Person">
                    <strong>{u.name || u.email}</strong>
                    {u.name ? <div class="muted">{u.email}</div> : null}
                    <div class="muted">since {when(u.created_at)}</div>
                  </td>
                  <td data-label="Role">
                    {self || locked ? (
                      ROLE_LABEL[u.role]
                    ) : (
                      <form method="post" action={`/people/${u.id}/role`} class="inline">
                        <Csrf token={props.csrf} />
                        <label class="sr-only" for={`role-${u.id}`}>
                          Role of {u.email}
                        </label>
                        <select id={`role-${u.id}`} name="role">
                          {roles.map((r) => (
                            <option value={r} selected={r === u.role}>
                              {ROLE_LABEL[r]}
                            </option>
                          ))}
                        </select>{' '}
                        <button type="submit" class="small quiet">
                          Change
                        </button>
                      </form>
                    )}
                  </td>
                  <td data-label="Status">
                    {u.disabled_at ? (
                      <span class="badge bad">disabled</span>
                    ) : u.password_hash ? (
                      <span class="badge ok">active</span>
                    ) : (
                      <span class="badge warn">invited</span>
                    )}
                  </td>
                  <td data-label="Actions" class="actions">
                    {self || locked ? (
                      <span class="muted">{self ? 'you' : 'super admins only'}</span>
                    ) : (
                      <>
                        <form
                          method="post"
                          action={`/people/${u.id}/${u.disabled_at ? 'enable' : 'disable'}`}
                          class="inline"
                        >
                          <Csrf token={props.csrf} />
                          <button type="submit" class={`small ${u.disabled_at ? 'quiet' : 'bad'}`}>
                            {u.disabled_at ? 'Enable' : 'Disable'}
                          </button>
                        </form>{' '}
                        {/* Only someone above the person resets their password (identity/people.ts). */}
                        {u.role === 'member' || (u.role === 'admin' && props.canManageSuperAdmins) ? (
                          <PostButton
                            action={`/people/${u.id}/password-link`}
                            csrf={props.csrf}
                            label="Password link"
                            tone="quiet"
                          />
                        ) : null}{' '}
                        <details class="inline">
                          <summary>Delete…</summary>
                          <form method="post" action={`/people/${u.id}/delete`}>
                            <Csrf token={props.csrf} />
                            <p>{u.email} loses access at once. What they did stays in the audit log.</p>
                            <button type="submit" class="small bad">
                              Delete {u.email}
                            </button>
                          </form>
                        </details>
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
