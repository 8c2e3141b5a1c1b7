// @ts-check
// The workflow editor's island (api/web/workflows/editor.tsx draws the templates it clones). It
// builds the SPEC.md 4.1 workflow object from the form, asks POST /api/v1/workflows[/:id]/validate
// to check it while the person types (debounced), and puts each error of the answer under the
// field its path names. It holds no validation rule of its own: the server's one definition
// (automation/schema.ts, validate.ts, cron.ts) decides, the same one POST and PATCH use.
(() => {
  const form = /** @type {HTMLFormElement} */ (document.getElementById('wf-editor'));
  if (!form) return;
  const workflowId = form.dataset.workflowId || '';
  const csrf = form.dataset.csrf || '';
  const inputsBox = /** @type {HTMLElement} */ (document.getElementById('wf-inputs'));
  const stepsBox = /** @type {HTMLElement} */ (document.getElementById('wf-steps'));
  const status = /** @type {HTMLElement} */ (document.getElementById('wf-status'));
  const preview = /** @type {HTMLElement} */ (document.getElementById('wf-cron-preview'));
  const otherErrors = /** @type {HTMLElement} */ (document.getElementById('wf-other-errors'));
  const initial = JSON.parse(document.getElementById('wf-initial')?.textContent || 'null');
  let uid = 0;

  /** @param {string} id */
  const clone = (id) =>
    /** @type {HTMLElement} */ (
      /** @type {HTMLTemplateElement} */ (document.getElementById(id)).content.firstElementChild?.cloneNode(
        true,
      )
    );

  /** Ties each label to its control and each control to its hint and error (ids are per clone). */
  function wire(/** @type {HTMLElement} */ part) {
    for (const wrap of part.querySelectorAll('.field')) {
      const control = wrap.querySelector('input, select, textarea');
      const label = wrap.querySelector(':scope > label');
      if (!control || !label) continue;
      const id = `wf-c${++uid}`;
      control.id = id;
      label.setAttribute('for', id);
      const described = [];
      const hint = wrap.querySelector(':scope > .hint');
      const error = wrap.querySelector(':scope > .field-error');
      for (const [el, suffix] of /** @type {const} */ ([
        [hint, 'hint'],
        [error, 'error'],
      ])) {
        if (!el) continue;
        el.id = `${id}-${suffix}`;
        described.push(el.id);
      }
      control.setAttribute('aria-describedby', described.join(' '));
    }
    for (const error of part.querySelectorAll('fieldset > .field-error')) {
      error.id = `wf-c${++uid}-error`;
      error.closest('fieldset')?.setAttribute('aria-describedby', error.id);
    }
  }

  /** Controls of a part, not those of parts nested in it (the form holds the steps). */
  function own(/** @type {HTMLElement} */ part, /** @type {string} */ selector) {
    return [...part.querySelectorAll(selector)].filter(
      (el) => el.closest('.step, .input-row') === (part === form ? null : part),
    );
  }

  // ---- reading and writing one part --------------------------------------------------------

  function setPath(/** @type {any} */ obj, /** @type {string} */ path, /** @type {unknown} */ value) {
    const keys = path.split('.');
    const last = /** @type {string} */ (keys.pop());
    for (const k of keys) obj = obj[k] ??= {};
    obj[last] = value;
  }
  const getPath = (/** @type {any} */ obj, /** @type {string} */ path) =>
    path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);

  /** The value a control stands for, or undefined to leave the field out (the server's default). */
  function readControl(/** @type {HTMLElement} */ part, /** @type {any} */ el) {
    const type = el.dataset.type || 'text';
    const text = typeof el.value === 'string' ? el.value : '';
    switch (type) {
      case 'text?':
        return text.trim() === '' ? null : text;
      case 'int':
        return text === '' ? undefined : Number(text);
      case 'int?':
        return text === '' ? null : Number(text);
      case 'duration': {
        const unit = part.querySelector(`[data-unit-for="${el.dataset.field}"]`);
        return text === '' ? null : Number(text) * Number(unit?.value || 1);
      }
      case 'bool':
        return el.checked;
      case 'label':
        return text.trim() === '' ? null : { name: text.trim() };
      case 'default':
        return readDefault(part, text);
      case 'permissions':
        return [...el.querySelectorAll('input[type=checkbox]:checked')].map((box) => {
          const [kind, value] = box.value.split(':');
          return kind === 'role' ? { role: value } : { user_id: value };
        });
      case 'headers': {
        /** @type {Record<string, string | null>} */
        const headers = {};
        for (const row of el.querySelectorAll('.header-row')) {
          const name = row.querySelector('[data-part=name]').value.trim();
          const value = row.querySelector('[data-part=value]').value;
          // Empty keeps the stored value (null); the server says when none is stored.
          if (name) headers[name] = value === '' ? null : value;
        }
        return headers;
      }
      default:
        return text;
    }
  }

  /** A default typed as its input says, when the text reads as one; else the text, for the server to judge. */
  function readDefault(/** @type {HTMLElement} */ part, /** @type {string} */ text) {
    if (text === '') return null;
    const type = /** @type {HTMLSelectElement} */ (part.querySelector('[data-field=type]')).value;
    if ((type === 'integer' || type === 'float') && text.trim() !== '' && !Number.isNaN(Number(text)))
      return Number(text);
    if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    return text;
  }

  function readPart(/** @type {HTMLElement} */ part) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const el of own(part, '[data-field]')) {
      const value = readControl(part, el);
      if (value !== undefined) setPath(out, /** @type {HTMLElement} */ (el).dataset.field || '', value);
    }
    return out;
  }

  function fill(/** @type {HTMLElement} */ part, /** @type {any} */ data) {
    for (const el of /** @type {any[]} */ (own(part, '[data-field]'))) {
      const value = getPath(data, el.dataset.field);
      const type = el.dataset.type || 'text';
      if (type === 'permissions') {
        for (const box of el.querySelectorAll('input[type=checkbox]')) {
          box.checked = (value || []).some((/** @type {any} */ p) =>
            'role' in p ? box.value === `role:${p.role}` : box.value === `user:${p.user_id}`,
          );
        }
      } else if (type === 'headers') {
        for (const name of Object.keys(value || {})) addHeader(el, name);
      } else if (type === 'bool') el.checked = Boolean(value);
      else if (type === 'label') el.value = value?.name ?? '';
      else if (type === 'duration' && typeof value === 'number') {
        const unit = part.querySelector(`[data-unit-for="${el.dataset.field}"]`);
        const size = [3600, 60, 1].find((s) => value % s === 0) || 1;
        if (unit) unit.value = String(size);
        el.value = String(value / size);
      } else if (value !== null && value !== undefined) el.value = String(value);
    }
  }

  // ---- parts: inputs, steps, headers -------------------------------------------------------

  function addInput(/** @type {any} */ data) {
    const part = clone('tpl-input');
    wire(part);
    fill(part, data || { type: 'string' });
    inputsBox.append(part);
    return part;
  }

  function addStep(/** @type {string} */ kind, /** @type {any} */ data) {
    const part = clone(`tpl-step-${kind}`);
    if (data?.id) part.dataset.stepId = data.id;
    wire(part);
    fill(part, data || {});
    stepsBox.append(part);
    number();
    return part;
  }

  function addHeader(/** @type {HTMLElement} */ box, /** @type {string} */ name) {
    const row = clone('tpl-header');
    const nameEl = /** @type {HTMLInputElement} */ (row.querySelector('[data-part=name]'));
    nameEl.value = name;
    if (name)
      /** @type {HTMLInputElement} */ (row.querySelector('[data-part=value]')).placeholder = '(stored)';
    box.querySelector('.headers')?.append(row);
    return row;
  }

  /**
   * Step headings say their position ("3. Condition"), and the step's buttons are described by
   * its heading, so "Move up" is heard as the move of this step, not of any.
   */
  function number() {
    [...stepsBox.children].forEach((li, i) => {
      const no = li.querySelector('.step-no');
      if (no) no.textContent = `${i + 1}.`;
      const heading = li.querySelector('h3');
      if (!heading) return;
      heading.id ||= `wf-c${++uid}-title`;
      for (const b of li.querySelectorAll('.step-head button'))
        b.setAttribute('aria-describedby', heading.id);
    });
  }

  function move(
    /** @type {HTMLElement} */ step,
    /** @type {number} */ by,
    /** @type {HTMLElement | null} */ keep,
  ) {
    const target = by < 0 ? step.previousElementSibling : step.nextElementSibling?.nextElementSibling;
    if ((by < 0 && !target) || (by > 0 && !step.nextElementSibling))
      return say(by < 0 ? 'This is already the first step.' : 'This is already the last step.');
    stepsBox.insertBefore(step, target || null);
    number();
    (keep || step).focus();
    const name = /** @type {HTMLInputElement} */ (step.querySelector('[data-field=name]')).value || 'Step';
    say(`${name} is now step ${[...stepsBox.children].indexOf(step) + 1} of ${stepsBox.children.length}.`);
    changed();
  }

  const say = (/** @type {string} */ text) => {
    status.textContent = text;
  };

  // ---- the definition and the server's verdict ---------------------------------------------

  /** The SPEC.md 4.1 object: what POST /api/v1/workflows takes, and what PATCH takes whole. */
  function definition() {
    const top = readPart(form);
    return {
      name: top.name,
      group: top.group,
      cron_schedule: top.cron_schedule,
      trigger_tracker_label: top.trigger_tracker_label,
      inputs: [...inputsBox.children].map((p) => readPart(/** @type {HTMLElement} */ (p))),
      steps: [...stepsBox.children].map((li) => {
        const el = /** @type {HTMLElement} */ (li);
        const s = /** @type {any} */ (readPart(el));
        return {
          ...(el.dataset.stepId ? { id: el.dataset.stepId } : {}),
          name: s.name,
          condition: s.condition,
          action: { __type__: el.dataset.kind, ...s.action },
          permissions: s.permissions || [],
        };
      }),
      run_permissions: top.run_permissions,
    };
  }

  /** The element an error path belongs to: the field, else the nearest enclosing one, else the part. */
  function placeOf(/** @type {string} */ path) {
    const keys = path.split('.');
    let part = /** @type {HTMLElement} */ (form);
    if ((keys[0] === 'steps' || keys[0] === 'inputs') && /^\d+$/.test(keys[1] || '')) {
      const box = keys[0] === 'steps' ? stepsBox : inputsBox;
      const found = box.children[Number(keys[1])];
      if (!found) return null;
      part = /** @type {HTMLElement} */ (found);
      keys.splice(0, 2);
    }
    for (let n = keys.length; n > 0; n--) {
      const field = keys.slice(0, n).join('.');
      const el = own(part, `[data-field="${field}"]`)[0];
      if (el) {
        const slot = el.closest('.field, fieldset')?.querySelector(':scope > .field-error');
        return { el, slot };
      }
    }
    return part === form ? null : { el: null, slot: part.querySelector('[data-for-part]') };
  }

  // ---- errors in a person's words, once they have had their say ----------------------------

  /**
   * The API's names for fields, as the form's labels say them: the server's messages name fields
   * by their JSON keys ("credential_id is required"); a person reads "Credential is required".
   */
  const WORDS = /** @type {Record<string, string>} */ ({
    credential_id: 'credential',
    query: 'SQL',
    chat_channel: 'channel',
    step_name: 'step to reply to',
    link_text: 'link text',
    expected_status: 'expected status',
    include_service_jwt: 'signed x-service-jwt',
    timeout_seconds: 'timeout',
    reviews_required: 'approvals needed',
    on_timeout: 'what happens when it expires',
    on_false: 'what happens when false',
    expression: 'condition',
    endpoint: 'URL',
    cron_schedule: 'cron schedule',
    trigger_tracker_label: 'tracker label',
    run_permissions: 'who may run it',
    permissions: 'approvers',
    key: 'input name',
  });
  /** A message with API field names and paths replaced by words, starting with a capital. */
  function words(/** @type {string} */ message) {
    const said = message
      .replace(/\bsteps\.(\d+)\b/g, (_, n) => `step ${Number(n) + 1}`)
      .replace(/\binputs\.(\d+)\b/g, (_, n) => `input ${Number(n) + 1}`)
      // Only the API's own names: input and step names people chose stay as they wrote them.
      .replace(/^[a-z_]+(?= is required)|\b[a-z]+_[a-z_]+\b/g, (w) => WORDS[w] ?? w);
    return said.charAt(0).toUpperCase() + said.slice(1);
  }
  /** Where an error is, for the list of errors no field holds: "Step 2 (mark)", "Input 1", "The workflow". */
  function whereOf(/** @type {string} */ path) {
    const [kind, n] = path.split('.');
    if (kind === 'steps' && /^\d+$/.test(n || '')) {
      const name = /** @type {HTMLInputElement | null} */ (
        stepsBox.children[Number(n)]?.querySelector('[data-field=name]')
      )?.value;
      return `Step ${Number(n) + 1}${name ? ` (${name})` : ''}`;
    }
    if (kind === 'inputs' && /^\d+$/.test(n || '')) return `Input ${Number(n) + 1}`;
    return 'The workflow';
  }

  /**
   * A field's error shows once the person has left the field (or changed a choice), or after a
   * save: an empty form is not a list of mistakes. Touched controls are marked on the control
   * that carries data-field (a fieldset of checkboxes counts as one).
   */
  let saveTried = false;
  /** @type {Array<{path: string, message: string}>} */
  let lastErrors = [];
  function touch(/** @type {EventTarget | null} */ target) {
    // A header row or a checkbox counts for the fieldset that carries the data-field.
    const field = target instanceof HTMLElement ? target.closest('[data-field]') : null;
    if (field && !field.hasAttribute('data-touched')) {
      field.setAttribute('data-touched', '');
      showErrors(lastErrors);
    }
  }
  const touched = (/** @type {Element | null | undefined} */ el) =>
    saveTried || Boolean(el?.closest('[data-field]')?.hasAttribute('data-touched'));

  /** Draws the errors the person may see now; returns how many are drawn. */
  function showErrors(/** @type {Array<{path: string, message: string}>} */ errors) {
    lastErrors = errors;
    for (const slot of form.querySelectorAll('.field-error')) {
      slot.textContent = '';
      slot.setAttribute('hidden', '');
    }
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    otherErrors.replaceChildren();
    let shown = 0;
    for (const e of errors) {
      const place = placeOf(e.path);
      const message = words(e.message);
      if (place?.slot) {
        // A part-level slot (no field): shown once anything in that part was touched.
        const part = place.slot.closest('.step, .input-row');
        const seen = place.el
          ? touched(place.el)
          : saveTried || Boolean(part?.querySelector('[data-touched]'));
        if (!seen) continue;
        place.slot.textContent = place.slot.textContent
          ? `${place.slot.textContent} ${message}.`
          : `${message}.`;
        place.slot.removeAttribute('hidden');
        place.el?.setAttribute('aria-invalid', 'true');
        shown++;
      } else if (saveTried) {
        const li = document.createElement('li');
        li.textContent = `${whereOf(e.path)}: ${message}`;
        otherErrors.append(li);
        shown++;
      }
    }
    return shown;
  }

  const UTC = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'UTC',
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
  function showPreview(/** @type {string[]} */ runs, /** @type {{message: string}[]} */ warnings) {
    const cron = /** @type {HTMLInputElement} */ (own(form, '[data-field=cron_schedule]')[0]).value.trim();
    preview.replaceChildren();
    if (!cron) return;
    for (const w of warnings) {
      const note = document.createElement('p');
      note.className = 'warning';
      note.textContent = w.message;
      preview.append(note);
    }
    if (runs.length === 0) return;
    const p = document.createElement('p');
    p.textContent = 'Next runs (UTC):';
    const ul = document.createElement('ul');
    for (const iso of runs) {
      const li = document.createElement('li');
      li.textContent = UTC.format(new Date(iso));
      ul.append(li);
    }
    preview.append(p, ul);
  }

  const headers = { 'content-type': 'application/json', 'x-csrf-token': csrf };
  let asked = 0;
  let timer = 0;

  async function check() {
    const ticket = ++asked;
    const res = await fetch(`/api/v1/workflows${workflowId ? `/${workflowId}` : ''}/validate`, {
      method: 'POST',
      headers,
      body: JSON.stringify(definition()),
    }).catch(() => null);
    // A slower answer to an older question must not overwrite a newer one.
    if (ticket !== asked) return;
    if (!res) return say('Could not reach the server to check the workflow.');
    const body = await res.json().catch(() => ({}));
    if (res.status === 200 || res.status === 422) {
      const all = (body.errors || []).length;
      const n = showErrors(body.errors || []);
      showPreview(body.cron_next_runs || [], body.warnings || []);
      say(
        all === 0
          ? 'No problems found.'
          : n === 0
            ? 'Not finished yet: fill in the fields.'
            : `${n} problem${n === 1 ? '' : 's'} to fix.`,
      );
    } else say(body.detail || `The check failed (${res.status}).`);
  }

  // Leaving with unsaved changes asks first (the browser's own prompt).
  let dirty = false;
  window.addEventListener('beforeunload', (event) => {
    if (dirty) event.preventDefault();
  });

  function changed() {
    dirty = true;
    clearTimeout(timer);
    timer = window.setTimeout(check, 400);
  }

  async function save(/** @type {SubmitEvent} */ event) {
    event.preventDefault();
    clearTimeout(timer);
    asked++;
    say('Saving…');
    const res = await fetch(`/api/v1/workflows${workflowId ? `/${workflowId}` : ''}`, {
      method: workflowId ? 'PATCH' : 'POST',
      headers,
      body: JSON.stringify(definition()),
    }).catch(() => null);
    if (!res) return say('Could not reach the server; nothing was saved.');
    const body = await res.json().catch(() => ({}));
    saveTried = true;
    if (res.ok) {
      dirty = false;
      window.location.assign(`/workflows/${body.id}?notice=${encodeURIComponent('Saved.')}`);
      return;
    }
    const n = showErrors(body.errors || []);
    say(
      n > 0
        ? `Not saved: ${n} problem${n === 1 ? '' : 's'} to fix.`
        : `Not saved: ${words(String(body.detail || res.status))}`,
    );
    /** @type {HTMLElement | null} */ (form.querySelector('[aria-invalid=true]'))?.focus();
  }

  // ---- events ------------------------------------------------------------------------------

  form.addEventListener('input', changed);
  form.addEventListener('change', (event) => {
    touch(event.target);
    changed();
  });
  form.addEventListener('focusout', (event) => touch(event.target));
  form.addEventListener('submit', save);
  form.addEventListener('click', (event) => {
    const button = /** @type {HTMLElement} */ (event.target).closest('button');
    if (!button || button.type === 'submit') return;
    const part = /** @type {HTMLElement} */ (button.closest('.step, .input-row'));
    const d = button.dataset;
    if (d.add === 'input') addInput(null).querySelector('input')?.focus();
    else if (d.add === 'step') {
      const kind = /** @type {HTMLSelectElement} */ (document.getElementById('wf-new-kind')).value;
      /** @type {HTMLElement | null} */ (addStep(kind, null).querySelector('[data-field=name]'))?.focus();
    } else if (d.add === 'header') {
      const box = /** @type {HTMLElement} */ (button.closest('fieldset'));
      /** @type {HTMLElement | null} */ (addHeader(box, '').querySelector('input'))?.focus();
    } else if (d.move) move(part, Number(d.move), button);
    else if (d.remove === 'header') button.closest('.header-row')?.remove();
    else if (d.remove) {
      part.remove();
      number();
      say(d.remove === 'step' ? 'Step removed.' : 'Input removed.');
    } else return;
    changed();
  });
  // Keyboard reorder without hunting for the buttons: Alt+Arrow inside a step moves it.
  stepsBox.addEventListener('keydown', (event) => {
    if (!event.altKey || (event.key !== 'ArrowUp' && event.key !== 'ArrowDown')) return;
    const step = /** @type {HTMLElement} */ (/** @type {HTMLElement} */ (event.target).closest('.step'));
    if (!step) return;
    event.preventDefault();
    move(step, event.key === 'ArrowUp' ? -1 : 1, /** @type {HTMLElement} */ (event.target));
  });

  wire(form);
  fill(form, initial || { run_permissions: [] });
  for (const input of initial?.inputs || []) addInput(input);
  for (const step of initial?.steps || []) addStep(step.action.__type__, step);
  if (initial) check();
})();
