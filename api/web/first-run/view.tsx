// The first-run checklist: six steps, each ticked from the organization's state and linking to
// the page that does it.
import type { FirstRunChecklist } from '../../../workspace/first-run.ts';
import { Csrf } from '../kit/components.tsx';

export function Checklist(props: { list: FirstRunChecklist; csrf: string }) {
  const { list } = props;
  return (
    <aside class="card first-run" id="first-run" aria-labelledby="first-run-title">
      <h2 id="first-run-title">Get started</h2>
      <p>
        {list.done} of {list.steps.length} steps done. Each step ticks itself once your organization has it;
        this list goes away when all are done.
      </p>
      <progress value={list.done} max={list.steps.length} aria-label="Steps done" />
      <ol class="checklist">
        {list.steps.map((s) => (
          <li class={s.done ? 'done' : ''} data-step={s.id} data-done={s.done ? 'yes' : 'no'}>
            <span class={`badge ${s.done ? 'ok' : ''}`}>{s.done ? 'done' : 'to do'}</span>{' '}
            <a href={s.href}>{s.label}</a>
            <div class="muted small">{s.why}</div>
          </li>
        ))}
      </ol>
      <form method="post" action="/first-run/dismiss" class="inline">
        <Csrf token={props.csrf} />
        <button type="submit" class="small quiet">
          Hide this checklist
        </button>
      </form>
    </aside>
  );
}
