// Small behaviours every page may use, bound here because the Content-Security-Policy allows no
// inline event handlers: a <select data-autosubmit> submits its form when changed.
document.addEventListener('change', (e) => {
  const el = e.target;
  if (el instanceof HTMLSelectElement && el.hasAttribute('data-autosubmit') && el.form) el.form.submit();
});
