import type { PanelOutcome } from '../../../dashboards/run.ts';
import type { DashboardRow, Panel, PanelAction } from '../../../store/dashboards.ts';
import { Badge, Csrf, cellText, Flash, ResultTable, when } from '../kit/components.tsx';
import { type ChartData, chartOf, describeChart } from './chart.ts';

export function DashboardList(props: {
  dashboards: DashboardRow[];
  archived: boolean;
  notice?: string | undefined;
}) {
  return (
    <section>
      <h1>Dashboards</h1>
      <Flash notice={props.notice} />
      <p>
        <a class="button" href="/dashboards/new">
          New dashboard
        </a>
      </p>
      {props.dashboards.length === 0 ? (
        <div class="card">
          <p>No dashboard is shared with you yet.</p>
          <p class="muted">
            A dashboard is a page of saved queries shown as tables or charts, with buttons on each row that
            start a workflow. Press <strong>New dashboard</strong> to build one, or run a one-off query in the{' '}
            <a href="/console">query console</a>.
          </p>
        </div>
      ) : (
        <ul class="plain card">
          {props.dashboards.map((d) => (
            <li>
              <a href={`/dashboards/${d.id}`}>
                <strong>{d.name}</strong>
              </a>{' '}
              <span class="muted">
                {d.panels.length} panel{d.panels.length === 1 ? '' : 's'} · updated {when(d.updated_at)}
              </span>{' '}
              {d.restricted_access ? <span class="badge">restricted</span> : null}
              {d.archived_at ? <span class="badge warn">archived</span> : null}
            </li>
          ))}
        </ul>
      )}
      <p>
        {props.archived ? (
          <a href="/dashboards">Hide archived</a>
        ) : (
          <a href="/dashboards?archived=1">Show archived</a>
        )}
      </p>
    </section>
  );
}

/** What one panel shows on this page load. */
export type PanelState = PanelOutcome | { status: 'awaiting_inputs' } | { status: 'error'; message: string };

export interface PanelView {
  panel: Panel;
  values: Record<string, string>;
  state: PanelState;
}

export function DashboardPage(props: {
  dashboard: DashboardRow;
  panels: PanelView[];
  csrf: string;
  workflowNames: Record<string, string>;
  canEdit: boolean;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const d = props.dashboard;
  const charts = props.panels.some((p) => chartOfState(p.panel, p.state) !== null);
  return (
    <section>
      <p class="muted">
        <a href="/dashboards">Dashboards</a> /
      </p>
      <h1>
        {d.name} {d.archived_at ? <span class="badge warn">archived</span> : null}
      </h1>
      <Flash notice={props.notice} error={props.error} />
      {props.canEdit ? (
        <p>
          <a class="button" href={`/dashboards/${d.id}/edit`}>
            Edit dashboard
          </a>
        </p>
      ) : null}
      {props.panels.length === 0 ? <p class="muted">This dashboard has no panels.</p> : null}
      {props.panels.map((view) => (
        <PanelCard
          back={pageQuery(props.panels)}
          view={view}
          all={props.panels}
          dashboardId={d.id}
          csrf={props.csrf}
          workflowNames={props.workflowNames}
        />
      ))}
      {charts ? <ChartScript /> : null}
    </section>
  );
}

/** The chart script (uPlot, bundled by bin/build.js), only on pages that draw a chart. */
export const ChartScript = () => <script src="/assets/dashboard-chart.js" type="module" />;

export function chartOfState(panel: Panel, state: PanelState): ChartData | null {
  return state.status === 'executed'
    ? chartOf(panel.details.view, state.result.columns, state.result.rows)
    : null;
}

/** A chart's figure: uPlot draws into the canvas box; the label says what it shows in words. */
export function ChartFigure(props: { chart: ChartData; id: string }) {
  return (
    <figure class="chart" data-chart={JSON.stringify(props.chart)} aria-labelledby={`${props.id}-caption`}>
      <div class="chart-canvas" aria-hidden="true" />
      <figcaption id={`${props.id}-caption`} class="muted small">
        {describeChart(props.chart)}
      </figcaption>
    </figure>
  );
}

/** Form field of a panel input: panel ids keep two panels' inputs of the same key apart. */
export const inputField = (panelId: string, key: string) => `${panelId}.${key}`;

/** The dashboard's current input values as its query string, so posts can come back to them. */
function pageQuery(panels: PanelView[]): string {
  const q = new URLSearchParams();
  for (const v of panels)
    for (const [k, value] of Object.entries(v.values)) q.set(inputField(v.panel.id, k), value);
  return q.toString();
}

function PanelCard(props: {
  back: string;
  view: PanelView;
  all: PanelView[];
  dashboardId: string;
  csrf: string;
  workflowNames: Record<string, string>;
}) {
  const { panel, values, state } = props.view;
  // SPEC.md 2.3: an action with neither a label nor a workflow is not rendered; nor is one whose
  // workflow the viewer may not start (workflowNames lists only those they may, run_permissions).
  const actions = panel.actions.filter(
    (a) => (a.label || a.workflow_id) && (!a.workflow_id || a.workflow_id in props.workflowNames),
  );
  const base = `/dashboards/${props.dashboardId}/panels/${panel.id}`;
  return (
    <article class="card wide" id={panel.id}>
      <h2>{panel.title || 'Untitled panel'}</h2>
      {panel.inputs.length > 0 ? (
        <form method="get" action={`/dashboards/${props.dashboardId}#${panel.id}`} class="row">
          {/* The other panels keep their values when this one is run again. */}
          {props.all
            .filter((o) => o.panel.id !== panel.id)
            .flatMap((o) =>
              Object.entries(o.values).map(([k, v]) => (
                <input type="hidden" name={inputField(o.panel.id, k)} value={v} />
              )),
            )}
          {panel.inputs.map((i) => (
            <div>
              <label for={inputField(panel.id, i.key)}>{i.description || i.key}</label>
              <input
                id={inputField(panel.id, i.key)}
                name={inputField(panel.id, i.key)}
                value={values[i.key] ?? ''}
              />
            </div>
          ))}
          <button type="submit">Run</button>
        </form>
      ) : null}
      <PanelBody
        panel={panel}
        back={props.back}
        state={state}
        base={base}
        values={values}
        csrf={props.csrf}
        actions={actions}
        workflowNames={props.workflowNames}
      />
    </article>
  );
}

export function PanelBody(props: {
  panel: Panel;
  back: string;
  state: PanelState;
  base: string;
  values: Record<string, string>;
  csrf: string;
  actions: PanelAction[];
  workflowNames: Record<string, string>;
}) {
  const s = props.state;
  switch (s.status) {
    case 'awaiting_inputs':
      return <p class="muted">Fill in the inputs and press Run.</p>;
    case 'error':
      return <p class="warning error">{s.message}</p>;
    case 'review_required':
      return (
        <form method="post" action={`${props.base}/submit`} class="warning">
          <Csrf token={props.csrf} />
          <input type="hidden" name="back" value={props.back} />
          {Object.entries(props.values).map(([k, v]) => (
            <input type="hidden" name={`in.${k}`} value={v} />
          ))}
          This panel's credential needs {s.reviewsRequired} review{s.reviewsRequired === 1 ? '' : 's'} before
          its query runs.{' '}
          <button type="submit" class="small">
            Request review
          </button>
        </form>
      );
    case 'pending_review':
      return (
        <p class="warning">
          <Badge status="pending" /> Waiting for {s.reviewsRequired} review
          {s.reviewsRequired === 1 ? '' : 's'}: query request{' '}
          <a href={`/reviews#${s.requestId}`}>{s.requestId}</a>. It runs here once approved.
        </p>
      );
    case 'executed': {
      const cols = s.result.columns;
      const chart = chartOfState(props.panel, s);
      return (
        <>
          {chart ? <ChartFigure chart={chart} id={`chart-${props.panel.id}`} /> : null}
          <ResultTable
            columns={cols}
            rows={s.result.rows}
            truncated={s.result.truncated}
            rowEndLabel={props.actions.length > 0 ? 'Actions' : ''}
            {...(props.actions.length > 0
              ? {
                  rowEnd: (row: unknown[]) => (
                    <div class="actions">
                      {props.actions.map((a) => (
                        <form method="post" action={`${props.base}/actions/${a.id}`} class="inline">
                          <Csrf token={props.csrf} />
                          {a.input_mappings.map((m) => {
                            const i = cols.indexOf(m.column);
                            return i < 0 ? null : (
                              <input type="hidden" name={`row.${m.column}`} value={cellText(row[i])} />
                            );
                          })}
                          <button type="submit" class="small" disabled={!a.workflow_id}>
                            {a.label ||
                              (a.workflow_id ? (props.workflowNames[a.workflow_id] ?? 'Run workflow') : '')}
                          </button>
                        </form>
                      ))}
                    </div>
                  ),
                }
              : {})}
          />
        </>
      );
    }
  }
}
