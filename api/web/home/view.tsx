// The first-run checklist: six steps, each ticked from the organization's state and linking to
// the page that does it.
import type { FirstRunChecklist } from '../../../workspace/first-run.ts';
import { Csrf, Flash } from '../kit/components.tsx';

export function HomePage(props: { list: FirstRunChecklist; csrf: string; error?: string | undefined }) {
  const { list } = props;
  return (
    <section>
      <h1>Get started</h1>
      <Flash error={props.error} />
      <p>
        {list.done} of {list.steps.length} steps done. Each step ticks itself once the organization has it;
        this page goes away when all are done.
      </p>
      <progress value={list.done} max={list.steps.length} aria-label="Steps done" />
      <ol class="checklist" id="first-run">
        {list.steps.map((s) => (
          <li class={s.done ? 'done' : ''} data-step={s.id}>
            <span class={`badge ${s.done ? 'ok' : ''}`}>{s.done ? 'done' : 'to do'}</span>{' '}
            <a href={s.href}>{s.label}</a>
            <div class="muted small">{s.why}</div>
          </li>
        ))}
      </ol>
      <div class="actions">
        <a href="/dashboards">Go to the dashboards</a>
        <form method="post" action="/first-run/dismiss" class="inline">
          <Csrf token={props.csrf} />
          <button type="submit" class="small quiet">
            Hide this checklist
          </button>
        </form>
      </div>
    </section>
  );
}
