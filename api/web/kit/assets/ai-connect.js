// The "Connect an AI client" page: Copy buttons, and the connect doctor, which walks the discovery
// an MCP client does on first contact (MCP authorization, 2025-11-25) and reports each step:
//  1. /mcp without a token answers 401 with WWW-Authenticate naming resource_metadata (RFC 9728 §5.1)
//  2. the protected-resource metadata names this resource and its authorization server (RFC 9728 §3)
//  3. the authorization server metadata (RFC 8414 §3) offers PKCE S256 and a way to register:
//     dynamic registration (RFC 7591) or client ID metadata documents
//  4. the token endpoint answers an empty request with an OAuth error (RFC 6749 §5.2), so it is reachable
//  5. each database: reachable by this person's AI, or red with the reason the server gave
(() => {
  document.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-copy-from]');
    if (!b) return;
    const from = document.getElementById(b.dataset.copyFrom);
    const text = from.value !== undefined && from.tagName === 'INPUT' ? from.value : from.textContent;
    const done = () => {
      const was = b.textContent;
      b.textContent = 'Copied';
      setTimeout(() => {
        b.textContent = was;
      }, 1500);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => select(from));
    else select(from);
  });
  function select(el) {
    if (el.select) el.select();
    else window.getSelection().selectAllChildren(el);
  }

  const run = document.getElementById('doctor-run');
  const list = document.getElementById('doctor-steps');
  if (!run || !list) return;
  function report(ok, text) {
    const li = document.createElement('li');
    li.dataset.ok = String(ok);
    li.className = ok ? 'ok' : 'bad';
    const mark = document.createElement('strong');
    mark.textContent = ok ? '✓ ' : '✗ ';
    li.append(mark, text);
    list.append(li);
    return ok;
  }
  async function json(url, init) {
    const res = await fetch(url, { credentials: 'omit', ...init });
    return { res, body: await res.json().catch(() => null) };
  }
  run.addEventListener('click', async () => {
    run.disabled = true;
    list.replaceChildren();
    try {
      const mcpUrl = document.getElementById('mcp-url').value;
      const first = await fetch(mcpUrl, {
        method: 'POST',
        credentials: 'omit',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      const challenge = first.headers.get('www-authenticate') ?? '';
      const rm = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      if (
        !report(
          first.status === 401 && Boolean(rm),
          first.status === 401 && rm
            ? `MCP endpoint asks for sign-in and points at ${rm}`
            : `MCP endpoint answered ${first.status} without a resource_metadata challenge`,
        )
      )
        return;
      const prm = await json(rm);
      const as = prm.body?.authorization_servers?.[0];
      if (
        !report(
          prm.res.ok && prm.body?.resource === mcpUrl && Boolean(as),
          prm.res.ok && as
            ? `Protected-resource metadata names ${prm.body.resource} and authorization server ${as}`
            : `Protected-resource metadata missing or wrong (HTTP ${prm.res.status})`,
        )
      )
        return;
      const asUrl = new URL(as);
      const meta = await json(
        `${asUrl.origin}/.well-known/oauth-authorization-server${asUrl.pathname === '/' ? '' : asUrl.pathname}`,
      );
      const m = meta.body ?? {};
      const pkce = (m.code_challenge_methods_supported ?? []).includes('S256');
      if (
        !report(
          meta.res.ok && m.issuer === as && pkce,
          meta.res.ok
            ? `Authorization server metadata found${pkce ? ', PKCE S256 supported' : ', but PKCE S256 is not offered'}`
            : `Authorization server metadata missing (HTTP ${meta.res.status})`,
        )
      )
        return;
      const ways = [
        m.registration_endpoint ? 'dynamic client registration' : null,
        m.client_id_metadata_document_supported ? 'client ID metadata documents' : null,
      ].filter(Boolean);
      if (
        !report(
          ways.length > 0,
          ways.length > 0
            ? `Clients can register by ${ways.join(' or ')}`
            : 'No way for a client to register',
        )
      )
        return;
      const token = await json(m.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code',
      });
      if (
        !report(
          token.res.status >= 400 && token.res.status < 500 && typeof token.body?.error === 'string',
          token.body?.error
            ? `Token endpoint reachable (answered ${token.body.error} to an empty request)`
            : `Token endpoint did not answer as OAuth (HTTP ${token.res.status})`,
        )
      )
        return;
      const dbs = document.getElementById('doctor-databases').content.querySelectorAll('li');
      if (dbs.length === 0)
        report(false, 'You can see no database; an admin registers one or grants you access');
      for (const d of dbs)
        report(
          d.dataset.ok === 'true',
          d.dataset.ok === 'true'
            ? `${d.dataset.name}: your AI may query it`
            : `${d.dataset.name}: not reachable — ${d.dataset.reason}`,
        );
    } catch (err) {
      report(false, `The check stopped: ${err.message}`);
    } finally {
      run.disabled = false;
    }
  });
})();
