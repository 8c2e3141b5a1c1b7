// The floor of a Node MCP server on this machine: node:http and node-postgres, one tool that runs
// the SQL it is given, nothing else (no authentication, access check, protection or audit). The
// MCP bench runs it beside Countersign, dbhub and Toolbox so the CPU a governed call costs can be
// read against what the runtime itself costs for the same HTTP request and statement.
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({
  host: process.env.PGHOST,
  port: Number(process.env.PGPORT),
  database: process.env.PGDATABASE,
  user: process.env.PGUSER,
  password: process.env.PGPASSWORD,
  max: 10,
});

async function answer(msg) {
  if (msg.method === 'initialize')
    return {
      protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'node-floor', version: '1.0.0' },
    };
  if (msg.method === 'tools/list')
    return {
      tools: [
        { name: 'execute_sql', inputSchema: { type: 'object', properties: { sql: { type: 'string' } } } },
      ],
    };
  if (msg.method === 'tools/call') {
    const r = await pool.query({ text: String(msg.params.arguments.sql), rowMode: 'array' });
    return { content: [{ type: 'text', text: JSON.stringify(r.rows) }] };
  }
  return {};
}

http
  .createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString());
      if (msg.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: await answer(msg) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
