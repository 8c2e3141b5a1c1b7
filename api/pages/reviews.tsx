import type { QueryRequestRow } from '../../store/query-requests.ts';
import type { Role } from '../../store/users.ts';
import { Badge, Csrf, Flash, when } from './components.tsx';

export interface ReviewContext {
  csrf: string;
  role: Role;
  emails: Record<string, string>;
  databases: Record<string, { name: string; review_bypass_allowed: boolean }>;
}

/** The review queue: requests waiting for the user's verdict, and the user's own open requests. */
export function ReviewsPage(props: {
  waiting: QueryRequestRow[];
  mine: QueryRequestRow[];
  ctx: ReviewContext;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  return (
    <section>
      <h1>Reviews</h1>
      <Flash notice={props.notice} error={props.error} />
      <h2>Waiting for you ({props.waiting.length})</h2>
      {props.waiting.length === 0 ? <p class="muted">No query request is waiting for your review.</p> : null}
      {props.waiting.map((r) => (
        <RequestCard r={r} ctx={props.ctx} mine={false} />
      ))}
      <h2>Your open requests ({props.mine.length})</h2>
      {props.mine.length === 0 ? <p class="muted">You have no open query requests.</p> : null}
      {props.mine.map((r) => (
        <RequestCard r={r} ctx={props.ctx} mine={true} />
      ))}
    </section>
  );
}

function RequestCard(props: { r: QueryRequestRow; ctx: ReviewContext; mine: boolean }) {
  const { r, ctx } = props;
  const db = ctx.databases[r.database_id];
  const base = `/reviews/${r.id}`;
  return (
    <article class="card wide" id={r.id}>
      <p>
        <Badge status={r.status} /> <strong>{db?.name ?? r.database_id}</strong>{' '}
        <span class="muted">
          by {ctx.emails[r.author_user_id] ?? r.author_user_id} ·{' '}
          {r.origin === 'ai' ? `AI (${r.ai_client_name ?? 'client'}) · ` : ''}
          {r.origin} · {when(r.created_at)} · needs {r.reviews_required} approval
          {r.reviews_required === 1 ? '' : 's'} · {r.id}
        </span>
      </p>
      <pre>{r.statement}</pre>
      {Array.isArray(r.params) && r.params.length > 0 ? (
        <p class="muted">
          Parameters: <code>{JSON.stringify(r.params)}</code>
        </p>
      ) : null}
      {props.mine ? (
        <OwnActions r={r} ctx={ctx} base={base} bypassAllowed={db?.review_bypass_allowed ?? false} />
      ) : (
        <form method="post" action={`${base}/review`}>
          <Csrf token={ctx.csrf} />
          <label for={`c-${r.id}`}>Comment (optional)</label>
          <input id={`c-${r.id}`} name="comment" maxlength={10000} />
          <div class="actions">
            <button type="submit" name="verdict" value="approve">
              Approve
            </button>
            <button type="submit" name="verdict" value="reject" class="bad">
              Reject
            </button>
            <button type="submit" name="verdict" value="comment" class="quiet">
              Comment only
            </button>
          </div>
        </form>
      )}
    </article>
  );
}

function OwnActions(props: { r: QueryRequestRow; ctx: ReviewContext; base: string; bypassAllowed: boolean }) {
  const { r, ctx } = props;
  return (
    <div class="actions">
      {r.status === 'approved' ? (
        <form method="post" action={`${props.base}/run`} class="inline">
          <Csrf token={ctx.csrf} />
          <button type="submit">Run</button>
        </form>
      ) : null}
      {/* SPEC.md 2.2 review_bypass_allowed: only a super admin, on their own request, acknowledging it. */}
      {r.status === 'pending' && ctx.role === 'super_admin' && props.bypassAllowed ? (
        <form method="post" action={`${props.base}/run`} class="card">
          <Csrf token={ctx.csrf} />
          <input type="hidden" name="bypass" value="1" />
          <label class="check">
            <input type="checkbox" name="acknowledge_override" value="true" required />I understand that this
            runs without the required reviews and is recorded as a bypass in the audit log.
          </label>
          <label for={`why-${r.id}`}>Reason</label>
          <input id={`why-${r.id}`} name="reason" maxlength={2000} required />
          <button type="submit" class="bad">
            Bypass and run
          </button>
        </form>
      ) : null}
      <form method="post" action={`${props.base}/cancel`} class="inline">
        <Csrf token={ctx.csrf} />
        <button type="submit" class="quiet">
          Cancel request
        </button>
      </form>
    </div>
  );
}
