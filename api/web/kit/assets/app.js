// Small behaviours every page may use, bound here because the Content-Security-Policy allows no
// inline event handlers: a <select data-autosubmit> submits its form when changed.
document.addEventListener('change', (e) => {
  const el = e.target;
  if (el instanceof HTMLSelectElement && el.hasAttribute('data-autosubmit') && el.form) el.form.submit();
});
// After a submit, the answer takes the focus (WCAG 2.4.3, 4.1.3): the console's outcome, or the
// one-line message a form's redirect put on the page, so keyboard and screen-reader users land on it.
document.addEventListener('DOMContentLoaded', () => {
  const answer = document.querySelector('#outcome, main [role=alert], main p.notice[role=status]');
  if (!answer) return;
  if (!answer.hasAttribute('tabindex')) answer.setAttribute('tabindex', '-1');
  answer.focus();
});
// <button data-copy-from="id"> copies the text of element #id (a one-time link, a new secret).
document.addEventListener('click', (e) => {
  const b = e.target instanceof Element ? e.target.closest('button[data-copy-from]') : null;
  const from = b && document.getElementById(b.getAttribute('data-copy-from') || '');
  if (!b || !from || !navigator.clipboard) return;
  navigator.clipboard.writeText((from.textContent || '').trim()).then(() => {
    b.textContent = 'Copied';
  });
});
