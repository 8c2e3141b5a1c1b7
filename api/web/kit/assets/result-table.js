// The island behind the result bar: reveal more rows, copy as tab-separated text, download CSV
// (RFC 4180, with the OWASP formula-injection guard). It reads the cells as drawn, so nothing
// the page did not show can be exported. Loaded without defer right after its table, so
// document.currentScript's parent is the box it serves.
(() => {
  const box = document.currentScript.parentElement;
  const t = box.querySelector('table');
  const n = Number(t.dataset.cols);
  function texts(row) {
    return (
      Array.from(row.children)
        .slice(0, n)
        // A protected cell exports its value as served (the mask), not its label.
        .map((c) => (c.dataset.export !== undefined ? c.dataset.export : c.textContent))
    );
  }
  function data() {
    const out = [texts(t.tHead.rows[0])];
    Array.from(t.tBodies[0].rows).forEach((r) => {
      if (r.children.length >= n && n > 0 && !(r.children.length === 1 && r.children[0].colSpan > 1))
        out.push(texts(r));
    });
    return out;
  }
  function csvCell(v) {
    v = String(v);
    if (/^[=+@\-\t\r]/.test(v)) v = "'" + v;
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }
  box.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.more) {
      Array.from(t.tBodies[0].rows)
        .filter((r) => r.hidden)
        .slice(0, Number(b.dataset.more))
        .forEach((r) => {
          r.hidden = false;
        });
      if (!t.querySelector('tbody tr[hidden]')) b.remove();
    }
    if (b.hasAttribute('data-copy') && navigator.clipboard)
      navigator.clipboard.writeText(
        data()
          .map((r) => r.join('\t'))
          .join('\n'),
      );
    if (b.hasAttribute('data-csv')) {
      const text =
        data()
          .map((r) => r.map(csvCell).join(','))
          .join('\r\n') + '\r\n';
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
      a.download = 'result.csv';
      a.click();
      URL.revokeObjectURL(a.href);
    }
  });
})();
