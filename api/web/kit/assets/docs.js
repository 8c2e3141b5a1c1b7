// The API reference page: reads /openapi.json and lists every operation with its summary,
// security and request-body schema, filtered as one types.
const esc = (s) =>
  String(s).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]);
fetch('/openapi.json')
  .then((r) => r.json())
  .then((spec) => {
    const byTag = {};
    for (const [path, item] of Object.entries(spec.paths))
      for (const [method, op] of Object.entries(item)) {
        const tag = (op.tags || ['other'])[0];
        if (!byTag[tag]) byTag[tag] = [];
        byTag[tag].push({ path, method, op });
      }
    const html = Object.keys(byTag)
      .sort()
      .map(
        (tag) =>
          '<h2>' +
          esc(tag) +
          '</h2>' +
          byTag[tag]
            .map(({ path, method, op }) => {
              const body = op.requestBody
                ? '<p>Request body</p><pre>' +
                  esc(JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)) +
                  '</pre>'
                : '';
              const sec = (op.security || []).map((s) => Object.keys(s)[0]).join(', ') || 'none';
              return (
                '<details data-k="' +
                esc((method + ' ' + path + ' ' + op.summary).toLowerCase()) +
                '"><summary><code class="m">' +
                method.toUpperCase() +
                '</code> <code>' +
                esc(path) +
                '</code> — ' +
                esc(op.summary || '') +
                '</summary><p>Credentials: ' +
                esc(sec) +
                '</p>' +
                body +
                '</details>'
              );
            })
            .join(''),
      )
      .join('');
    document.getElementById('ops').innerHTML = html;
    document.getElementById('q').addEventListener('input', (e) => {
      for (const d of document.querySelectorAll('details'))
        d.hidden = !d.dataset.k.includes(e.target.value.toLowerCase());
    });
  });
