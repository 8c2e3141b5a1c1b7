import type { AiReach } from '../../../workspace/ai-connect.ts';

/** Ready-to-paste settings per client, all pointing at the one MCP URL. */
export function clientConfigs(
  mcpUrl: string,
): Array<{ id: string; name: string; where: string; text: string }> {
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return [
    {
      id: 'claude-desktop',
      name: 'Claude Desktop',
      where:
        'Settings → Connectors → Add custom connector, and paste the URL. Older versions: add this to claude_desktop_config.json.',
      text: json({ mcpServers: { countersign: { command: 'npx', args: ['-y', 'mcp-remote', mcpUrl] } } }),
    },
    {
      id: 'claude-code',
      name: 'Claude Code',
      where: 'Run in a terminal, then /mcp in Claude Code to sign in.',
      text: `claude mcp add --transport http countersign ${mcpUrl}`,
    },
    {
      id: 'cursor',
      name: 'Cursor',
      where: 'Add to ~/.cursor/mcp.json (or .cursor/mcp.json in a project).',
      text: json({ mcpServers: { countersign: { url: mcpUrl } } }),
    },
    {
      id: 'vscode',
      name: 'VS Code',
      where: 'Add to .vscode/mcp.json in your workspace (or “MCP: Add Server…” → HTTP).',
      text: json({ servers: { countersign: { type: 'http', url: mcpUrl } } }),
    },
    {
      id: 'chatgpt',
      name: 'ChatGPT',
      where:
        'Settings → Apps & Connectors → Advanced → Developer mode, then Create: name Countersign, this URL, authentication OAuth.',
      text: mcpUrl,
    },
  ];
}

/**
 * How to connect an AI client to /mcp: the URL, settings per client, which databases the person's
 * AI may reach and why not the others, and a connect doctor (assets/ai-connect.js) that does what
 * a client does on first contact.
 */
export function AiConnectPage(props: { mcpUrl: string; reach: AiReach; isAdmin: boolean }) {
  const reachable = props.reach.databases.filter((d) => d.blockers.length === 0);
  const blocked = props.reach.databases.filter((d) => d.blockers.length > 0);
  return (
    <section>
      <h1>Connect an AI client</h1>
      <p>
        Countersign is an MCP server. An AI client signs in as you (OAuth), and every query it runs is
        governed like yours: your access, your data-protection policy, read-only, audited.
      </p>
      <div class="card wide">
        <label for="mcp-url">MCP server URL</label>
        <div class="copy-row">
          <input id="mcp-url" value={props.mcpUrl} readonly />
          <button type="button" class="small" data-copy-from="mcp-url">
            Copy
          </button>
        </div>
      </div>

      <h2>Settings for your client</h2>
      {clientConfigs(props.mcpUrl).map((c) => (
        <details class="card wide client-config" id={`client-${c.id}`}>
          <summary>{c.name}</summary>
          <p class="muted">{c.where}</p>
          <pre id={`config-${c.id}`}>{c.text}</pre>
          <button type="button" class="small" data-copy-from={`config-${c.id}`}>
            Copy {c.name} settings
          </button>
        </details>
      ))}

      <h2>What your AI may reach</h2>
      {reachable.length === 0 ? (
        <p class="warning" id="reach-none">
          Your AI client can reach no database yet. The reasons are below; an admin changes them.
        </p>
      ) : (
        <ul id="reach-ok">
          {reachable.map((d) => (
            <li data-database={d.id}>
              <strong>{d.name}</strong> <span class="muted">({d.adapter})</span>
            </li>
          ))}
        </ul>
      )}
      {blocked.length > 0 ? (
        <>
          <h3>Not reachable, and why</h3>
          <ul id="reach-blocked">
            {blocked.map((d) => (
              <li data-database={d.id}>
                <strong>{d.name}</strong>:{' '}
                {d.blockers.map((b, i) => (
                  <>
                    {i > 0 ? '; ' : ''}
                    {b.reason}
                    {props.isAdmin ? (
                      <>
                        {' '}
                        (<a href={b.fix}>change</a>)
                      </>
                    ) : null}
                  </>
                ))}
              </li>
            ))}
          </ul>
          {props.isAdmin ? null : <p class="muted">Ask an admin to change these.</p>}
        </>
      ) : null}
      {props.reach.restrictedCount > 0 ? (
        <p class="muted">
          {props.reach.restrictedCount} more database(s) of your organization are restricted to people with a
          grant; an admin grants access on the database’s page.
        </p>
      ) : null}

      <h2>Connect doctor</h2>
      <p class="muted">
        Does what a client does when it first connects: finds the protected-resource metadata, the
        authorization server and how to register, reaches the token endpoint, and checks each database above.
      </p>
      <button type="button" id="doctor-run">
        Run the connect doctor
      </button>
      <ol id="doctor-steps" aria-live="polite" />
      {/* What the doctor reports per database, as the server computed it for you. */}
      <template id="doctor-databases">
        {props.reach.databases.map((d) => (
          <li
            data-name={d.name}
            data-ok={d.blockers.length === 0 ? 'true' : 'false'}
            data-reason={d.blockers.map((b) => b.reason).join('; ')}
          />
        ))}
      </template>
      <script src="/assets/ai-connect.js" defer />
    </section>
  );
}
