import type { WaitingApproval } from '../../../automation/approvals.ts';
import type { WritePreview } from '../../../governance/preview/index.ts';
import type { Requirement } from '../../../governance/risk-rules.ts';
import type { UndoOffer } from '../../../governance/undo/index.ts';
import type { QueryRequestRow, ReviewRow, RevisionRow } from '../../../store/query-requests.ts';
import type { Role } from '../../../store/users.ts';
import { Badge, Csrf, Flash, when } from '../kit/components.tsx';
import { lineDiff } from '../kit/diff.ts';
import { PreviewCard } from './preview.tsx';

export interface ReviewContext {
  csrf: string;
  role: Role;
  emails: Record<string, string>;
  databases: Record<string, { name: string; review_bypass_allowed: boolean }>;
  /** Every review and comment of the requests shown, oldest first. */
  reviews: Record<string, ReviewRow[]>;
  /** Earlier revisions of the SQL, to show what an edit changed. */
  revisions: Record<string, RevisionRow[]>;
  /** Write previews of the requests shown, as this reader may see them. */
  previews?: Record<string, WritePreview | null>;
  /** Per preview column, what this reader's policy does to it (workspace/console.ts columnMarks). */
  previewMarks?: Record<string, Array<string | null>>;
  /** What each request's risk level requires, and whose approvals count now. */
  approvals?: Record<string, { requirement: Requirement; valid: string[] }>;
}

/** The review queue: requests waiting for the user's verdict, and the user's own open requests. */
export function ReviewsPage(props: {
  waiting: QueryRequestRow[];
  mine: QueryRequestRow[];
  /** Executed writes whose kept rows can still be put back. */
  undoable?: Array<{ request: QueryRequestRow; undo: UndoOffer }>;
  /** Workflow runs waiting on an approval this person may give. */
  workflowApprovals: WaitingApproval[];
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
      <h2>Workflow approvals waiting for you ({props.workflowApprovals.length})</h2>
      {props.workflowApprovals.length === 0 ? (
        <p class="muted">No workflow run is waiting for your approval.</p>
      ) : null}
      {props.workflowApprovals.map((a) => (
        <ApprovalCard a={a} csrf={props.ctx.csrf} />
      ))}
      <h2>Your requests ({props.mine.length})</h2>
      {props.mine.length === 0 ? <p class="muted">You have no open or rejected query request.</p> : null}
      {props.mine.map((r) => (
        <RequestCard r={r} ctx={props.ctx} mine={true} />
      ))}
      {props.undoable && props.undoable.length > 0 ? (
        <UndoList items={props.undoable} ctx={props.ctx} />
      ) : null}
    </section>
  );
}

/** One request on its own page, with its write preview. */
export function RequestPage(props: { r: QueryRequestRow; ctx: ReviewContext; mine: boolean }) {
  return (
    <section>
      <p class="muted">
        <a href="/reviews">Reviews</a> /
      </p>
      <h1>Query request {props.r.id}</h1>
      <RequestCard r={props.r} ctx={props.ctx} mine={props.mine} />
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
        <Badge status={r.status} />{' '}
        <span class={`badge ${r.classification === 'write' ? 'bad' : ''}`}>
          {r.classification === 'write' ? 'writes' : 'reads'}
        </span>{' '}
        <strong>{db?.name ?? r.database_id}</strong>{' '}
        <span class="muted">
          by {ctx.emails[r.author_user_id] ?? r.author_user_id} ·{' '}
          {r.origin === 'ai' ? `AI (${r.ai_client_name ?? 'client'}) · ` : ''}
          {r.origin} · {when(r.created_at)} · <a href={base}>{r.id}</a>
        </span>
      </p>
      <RequirementLine r={r} approvals={ctx.approvals?.[r.id]} />
      {r.justification ? (
        <p>
          <span class="muted">Why:</span> {r.justification}
        </p>
      ) : null}
      <Statement r={r} revisions={ctx.revisions[r.id] ?? []} />
      {Array.isArray(r.params) && r.params.length > 0 ? (
        <p class="muted">
          Parameters: <code>{JSON.stringify(r.params)}</code>
        </p>
      ) : null}
      {ctx.previews === undefined && r.classification === 'write' ? (
        <p>
          <a href={base} class="preview-link">
            Open the request for its write preview
          </a>{' '}
          <span class="muted small">(the rows it would change, read as you may see them)</span>
        </p>
      ) : null}
      {ctx.previews?.[r.id] ? (
        <PreviewCard
          p={ctx.previews[r.id]!}
          marks={ctx.previewMarks?.[r.id]}
          level={ctx.approvals?.[r.id]?.requirement.level ?? r.risk_level}
        />
      ) : null}
      <Conversation r={r} reviews={ctx.reviews[r.id] ?? []} emails={ctx.emails} />
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
      {/* An undo's statement is bound to the rows it puts back: it is never edited (governance/undo/). */}
      {!r.undo_of && (r.status === 'pending' || r.status === 'approved' || r.status === 'rejected') ? (
        <details>
          <summary>Edit the SQL (voids the approvals given so far)</summary>
          <form method="post" action={`${props.base}/edit`}>
            <Csrf token={ctx.csrf} />
            <label for={`sql-${r.id}`}>SQL</label>
            <textarea id={`sql-${r.id}`} name="statement" required spellcheck={false}>
              {r.statement}
            </textarea>
            <button type="submit">Save new revision</button>
          </form>
        </details>
      ) : null}
      <form method="post" action={`${props.base}/review`} class="row">
        <Csrf token={ctx.csrf} />
        <div>
          <label for={`reply-${r.id}`}>Reply to the reviewers</label>
          <input id={`reply-${r.id}`} name="comment" maxlength={10000} required />
        </div>
        <button type="submit" name="verdict" value="comment" class="quiet fit">
          Comment
        </button>
      </form>
      {/* Only a request that has not run, and is not withdrawn, can be canceled (governance/requests.ts). */}
      {r.status === 'pending' || r.status === 'approved' || r.status === 'rejected' ? (
        <form method="post" action={`${props.base}/cancel`} class="inline">
          <Csrf token={ctx.csrf} />
          <button type="submit" class="quiet">
            Cancel request
          </button>
        </form>
      ) : null}
    </div>
  );
}

const LEVELS: Record<string, string> = {
  ddl: 'DDL',
  no_where: 'no WHERE',
  large: 'large',
  ordinary: 'ordinary',
};

/** The request's risk level and why, how many approvals count of those it needs, and who may give them. */
function RequirementLine(props: {
  r: QueryRequestRow;
  approvals: { requirement: Requirement; valid: string[] } | undefined;
}) {
  const need = props.approvals?.requirement;
  const required = need?.reviews_required ?? props.r.reviews_required;
  const count = props.approvals?.valid.length ?? 0;
  const level = need?.level ?? props.r.risk_level;
  const role = need?.approver_role ?? props.r.approver_role;
  return (
    <p class="requirement" data-level={level ?? 'read'}>
      {level ? (
        <>
          <span class={`badge ${level === 'ordinary' ? '' : 'bad'}`} data-risk-level={level}>
            risk: {LEVELS[level] ?? level}
          </span>{' '}
          <span class="muted">{need?.why ?? props.r.risk_why}</span> ·{' '}
        </>
      ) : null}
      <strong data-approvals={`${count}/${required}`}>
        {count} of {required} approval{required === 1 ? '' : 's'}
      </strong>{' '}
      <span class="muted small">
        · who may approve:{' '}
        {role === 'super_admin'
          ? 'super admins'
          : role === 'admin'
            ? 'admins and super admins'
            : 'anyone with access but the author'}
      </span>
    </p>
  );
}

/**
 * Executed writes that can be undone. Only the statement and how many rows were kept are shown:
 * the kept values are sealed, and the undo request binds them when it runs.
 */
function UndoList(props: {
  items: Array<{ request: QueryRequestRow; undo: UndoOffer }>;
  ctx: ReviewContext;
}) {
  return (
    <>
      <h2>Executed writes you can undo ({props.items.length})</h2>
      {props.items.map(({ request: r, undo }) => (
        <article class="card wide" id={`undo-${r.id}`}>
          <p>
            <Badge status={r.status} />{' '}
            <strong>{props.ctx.databases[r.database_id]?.name ?? r.database_id}</strong>{' '}
            <span class="muted">
              by {props.ctx.emails[r.author_user_id] ?? r.author_user_id} · {r.id}
              {r.executed_at ? ` · ran ${when(r.executed_at)}` : ''}
            </span>
          </p>
          <pre>{r.statement}</pre>
          <p class="muted small">
            {undo.rows} row(s) kept until {undo.expires_at ? when(new Date(undo.expires_at)) : '—'}. Undo
            opens a new request with the inverse statement; it runs only once reviewed.
          </p>
          <form method="post" action={`/reviews/${r.id}/undo`} class="inline">
            <Csrf token={props.ctx.csrf} />
            <button type="submit">Undo</button>
          </form>
        </article>
      ))}
    </>
  );
}

/** The SQL; after an edit, what changed since the revision before. */
function Statement(props: { r: QueryRequestRow; revisions: RevisionRow[] }) {
  const { r } = props;
  const previous = props.revisions.filter((x) => x.revision < r.revision).at(-1);
  if (!previous) return <pre>{r.statement}</pre>;
  return (
    <div>
      <p class="muted small">
        Revision {r.revision}: edited since revision {previous.revision} (− removed, + added)
      </p>
      <pre class="diff">
        {lineDiff(previous.statement, r.statement).map((l) => (
          <div
            class={`diff-${l.kind}`}
          >{`${l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}${l.text}`}</div>
        ))}
      </pre>
    </div>
  );
}

/** Approvals, rejections and comments, for the author and the reviewers alike. */
function Conversation(props: { r: QueryRequestRow; reviews: ReviewRow[]; emails: Record<string, string> }) {
  const { r } = props;
  if (props.reviews.length === 0) return null;
  const voided = props.reviews.filter((x) => x.verdict === 'approve' && x.revision < r.revision);
  return (
    <div class="conversation">
      {voided.length > 0 ? (
        <p class="warning small">
          The edit to revision {r.revision} voided {voided.length} approval(s) given to an earlier revision (
          {voided.map((x) => props.emails[x.user_id] ?? x.user_id).join(', ')}).
        </p>
      ) : null}
      <ul class="plain">
        {props.reviews.map((x) => (
          <li>
            <strong>{props.emails[x.user_id] ?? x.user_id}</strong>{' '}
            {x.verdict === 'comment' ? (
              <span class="muted">commented</span>
            ) : (
              <Badge status={x.verdict === 'approve' ? 'approved' : 'rejected'} />
            )}{' '}
            <span class="muted small">
              on revision {x.revision} · {when(x.created_at)}
              {x.verdict === 'approve' && x.revision < r.revision ? ' · void: the SQL changed since' : ''}
            </span>
            {x.body ? <div>{x.body}</div> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A workflow run waiting on this person: who started it, with which inputs (as this person's
 * policy lets them see them), what happens next, and Approve/Reject right here. The form posts to
 * the run page's approval action, the same domain function as the REST approvals route.
 */
function ApprovalCard(props: { a: WaitingApproval; csrf: string }) {
  const { a } = props;
  const id = `approval-${a.runId}`;
  const inputs = Object.entries(a.inputs);
  return (
    <article class="card wide approval" id={id} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>
        <a href={`/runs/${a.workflowId}/${a.runId}`}>{a.workflowName}</a>{' '}
        <span class="muted small">
          waiting at step {a.step} · started {when(a.startedAt)}
        </span>
      </h3>
      <p>
        Started by <strong>{a.initiator}</strong>
      </p>
      {a.inputsHidden ? (
        <p class="warning small" data-inputs="hidden">
          {a.inputsHidden}
        </p>
      ) : inputs.length > 0 ? (
        <dl class="inputs" data-inputs="shown">
          {inputs.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>
                <code>{String(v)}</code>
              </dd>
            </>
          ))}
        </dl>
      ) : (
        <p class="muted small">No inputs.</p>
      )}
      {a.next ? (
        <details>
          <summary>
            If approved, next: {a.next.name} ({a.next.type})
          </summary>
          <pre>{a.next.text}</pre>
        </details>
      ) : (
        <p class="muted small">If approved, the run ends here.</p>
      )}
      <form method="post" action={`/runs/${a.workflowId}/${a.runId}/approvals`}>
        <Csrf token={props.csrf} />
        <input type="hidden" name="back" value="reviews" />
        <label for={`${id}-comment`}>Comment (optional)</label>
        <input id={`${id}-comment`} name="comment" maxlength={2000} />
        <div class="actions">
          <button type="submit" name="decision" value="approve">
            Approve
          </button>
          <button type="submit" name="decision" value="reject" class="bad">
            Reject
          </button>
        </div>
      </form>
    </article>
  );
}
