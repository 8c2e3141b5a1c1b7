// Small behaviours every page may use, bound here because the Content-Security-Policy allows no
// inline event handlers: a <select data-autosubmit> submits its form when changed.
document.addEventListener('change', (e) => {
  const el = e.target;
  if (el instanceof HTMLSelectElement && el.hasAttribute('data-autosubmit') && el.form) el.form.submit();
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
