// The query console's editor, bundled by bin/build.js into assets/sql-editor.js: CodeMirror over
// the plain form (api/web/console/view.tsx), which keeps working without it. The textarea stays
// the form field; the editor writes into it. Completion and the schema browser come from the
// governed schema endpoint, so only names the person may use appear, protected ones labelled.
// Styles: the editor lives in a shadow root, where CodeMirror adds its styles as constructable
// stylesheets (CSSOM), which the strict Content-Security-Policy (style-src 'self', no inline
// <style>) allows; in the document itself it would write a <style> element, which CSP blocks.
import { MSSQL, MySQL, PLSQL, PostgreSQL, StandardSQL, sql } from '@codemirror/lang-sql';
import { Compartment, Prec } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import { basicSetup, EditorView } from 'codemirror';

const DIALECTS = { postgres: PostgreSQL, mysql: MySQL, mssql: MSSQL, plsql: PLSQL, standard: StandardSQL };
const LABEL = { mask: 'masked', partial: 'partly masked', hash: 'hashed', hide: 'hidden' };

const form = document.getElementById('console-form');
const textarea = document.getElementById('statement');
const select = document.getElementById('credential');
if (form && textarea && select) start();

function start() {
  const language = new Compartment();
  const run = (view) => {
    const sel = view.state.selection.main;
    // The selection alone runs when there is one; the whole text stays in the editor.
    const full = view.state.doc.toString();
    textarea.value = sel.empty ? full : view.state.sliceDoc(sel.from, sel.to);
    let keep = form.querySelector('input[name="editor_text"]');
    if (!keep) {
      keep = document.createElement('input');
      keep.type = 'hidden';
      keep.name = 'editor_text';
      form.append(keep);
    }
    keep.value = full;
    form.requestSubmit();
    return true;
  };
  const host = document.createElement('div');
  host.className = 'sql-editor';
  const shadow = host.attachShadow({ mode: 'open' });
  textarea.after(host);
  const view = new EditorView({
    root: shadow,
    parent: shadow,
    doc: textarea.value,
    extensions: [
      Prec.highest(keymap.of([{ key: 'Mod-Enter', run }])),
      basicSetup,
      language.of(sql({ dialect: dialect() })),
      EditorView.lineWrapping,
      EditorView.theme({
        '&': { minHeight: '10rem', backgroundColor: '#fff' },
        '.cm-scroller': { minHeight: '10rem', fontFamily: 'ui-monospace, monospace' },
        '&.cm-focused': { outline: 'none' },
      }),
      EditorView.contentAttributes.of({
        'aria-label': 'SQL',
        'aria-describedby': 'run-hint',
        'aria-multiline': 'true',
      }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) textarea.value = u.state.doc.toString();
      }),
    ],
  });
  textarea.hidden = true;
  textarea.removeAttribute('required');
  // The label names the editor now (its content is the focusable textbox).
  const label = form.querySelector('label[for="statement"]');
  label?.addEventListener('click', () => view.focus());
  form.addEventListener('submit', () => {
    if (!form.querySelector('input[name="editor_text"]')) textarea.value = view.state.doc.toString();
  });

  const save = document.getElementById('save-form');
  save?.addEventListener('submit', () => {
    document.getElementById('save-statement').value = view.state.doc.toString();
    document.getElementById('save-credential').value = select.value;
  });
  document.querySelector('.save-query')?.addEventListener('toggle', () => {
    document.getElementById('save-statement').value = view.state.doc.toString();
  });

  let loaded = 0;
  async function loadSchema() {
    const [db, crd] = select.value.split('/');
    const mine = ++loaded;
    const status = document.getElementById('schema-status');
    if (status) status.textContent = 'Loading tables…';
    let schema = null;
    try {
      const res = await fetch(
        `/api/v1/desk/databases/${encodeURIComponent(db)}/schema?credential_id=${encodeURIComponent(crd)}`,
        { credentials: 'same-origin', headers: { accept: 'application/json' } },
      );
      if (res.ok) schema = await res.json();
      else if (status)
        status.textContent = `Could not read the schema (${(await res.json().catch(() => ({}))).detail ?? res.status}).`;
    } catch {
      if (status) status.textContent = 'Could not read the schema.';
    }
    if (mine !== loaded) return;
    view.dispatch({ effects: language.reconfigure(sql(languageConfig(schema))) });
    if (schema) drawBrowser(schema, view);
  }
  function reviewState() {
    const opt = select.selectedOptions[0];
    const n = Number(opt?.dataset.reviews ?? 0);
    const note = document.getElementById('review-note');
    if (note) note.hidden = n === 0;
    const count = document.getElementById('review-count');
    if (count) count.textContent = String(n);
    const button = document.getElementById('run-button');
    if (button) button.textContent = n > 0 ? 'Submit for review' : 'Run query';
  }
  select.addEventListener('change', () => {
    reviewState();
    loadSchema();
  });
  reviewState();
  loadSchema();
}

function dialect() {
  return DIALECTS[select.selectedOptions[0]?.dataset.dialect ?? 'standard'] ?? StandardSQL;
}

/** lang-sql's namespace: schema → table → columns, each column detailed with its type and mark. */
function languageConfig(schema) {
  if (!schema) return { dialect: dialect() };
  const ns = {};
  for (const t of schema.tables) {
    ns[t.schema] ??= {};
    ns[t.schema][t.name] = t.columns.map((c) => ({
      label: c.name,
      type: 'property',
      detail: c.protection ? `${c.type} · ${LABEL[c.protection]}` : c.type,
    }));
  }
  const schemas = Object.keys(ns);
  const defaultSchema = schemas.includes('public') ? 'public' : schemas.length === 1 ? schemas[0] : undefined;
  return { dialect: dialect(), schema: ns, ...(defaultSchema ? { defaultSchema } : {}) };
}

function insert(view, text) {
  const sel = view.state.selection.main;
  view.dispatch({
    changes: { from: sel.from, to: sel.to, insert: text },
    selection: { anchor: sel.from + text.length },
  });
  view.focus();
}

function quoteIfNeeded(name) {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** Tables the person opened, kept open when the schema is drawn again. */
const expanded = new Set();

function drawBrowser(schema, view) {
  const tree = document.getElementById('schema-tree');
  const status = document.getElementById('schema-status');
  const filter = document.getElementById('schema-filter');
  if (!tree) return;
  tree.replaceChildren();
  if (status)
    status.textContent =
      schema.tables.length === 0
        ? 'No tables visible to this credential.'
        : `${schema.tables.length} table(s)${schema.policy ? `; policy “${schema.policy}” applies to you` : ''}. Click a name to insert it.`;
  const single = new Set(schema.tables.map((t) => t.schema)).size === 1;
  schema.tables.forEach((t, i) => {
    const li = document.createElement('li');
    li.dataset.name = `${t.schema}.${t.name}`.toLowerCase();
    const toggle = document.createElement('button');
    toggle.type = 'button';
    toggle.className = 'small quiet disclosure';
    toggle.setAttribute('aria-controls', `schema-cols-${i}`);
    toggle.setAttribute('aria-label', `Show columns of ${t.name}`);
    const name = document.createElement('button');
    name.type = 'button';
    name.className = 'small quiet table-name';
    const qualified =
      single && t.schema === 'public'
        ? quoteIfNeeded(t.name)
        : `${quoteIfNeeded(t.schema)}.${quoteIfNeeded(t.name)}`;
    name.textContent = t.name;
    name.title = `Insert ${qualified}`;
    name.addEventListener('click', () => insert(view, qualified));
    const cols = document.createElement('ul');
    cols.id = `schema-cols-${i}`;
    cols.hidden = !expanded.has(li.dataset.name);
    toggle.setAttribute('aria-expanded', String(!cols.hidden));
    toggle.textContent = cols.hidden ? '▸' : '▾';
    for (const c of t.columns) {
      const cli = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'small quiet column-name';
      b.dataset.column = c.name;
      b.append(c.name, ' ');
      const type = document.createElement('span');
      type.className = 'muted';
      type.textContent = c.type;
      b.append(type);
      if (c.protection) {
        const tag = document.createElement('span');
        tag.className = 'tag';
        tag.textContent = LABEL[c.protection];
        b.append(' ', tag);
      }
      b.addEventListener('click', () => insert(view, quoteIfNeeded(c.name)));
      cli.append(b);
      cols.append(cli);
    }
    toggle.addEventListener('click', () => {
      cols.hidden = !cols.hidden;
      if (cols.hidden) expanded.delete(li.dataset.name);
      else expanded.add(li.dataset.name);
      toggle.setAttribute('aria-expanded', String(!cols.hidden));
      toggle.textContent = cols.hidden ? '▸' : '▾';
    });
    li.append(toggle, name, cols);
    tree.append(li);
  });
  if (filter) {
    filter.hidden = schema.tables.length < 2;
    filter.oninput = () => {
      const q = filter.value.trim().toLowerCase();
      for (const li of tree.children) li.hidden = q !== '' && !li.dataset.name.includes(q);
    };
  }
}
