// Third-party MCP tools against the real server: the MCP conformance suite (the server scenarios
// that apply to a server offering only these tools) and the MCP Inspector CLI, each with a token
// from the real OAuth flow.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';
import { type Listening, listen } from '../peers/http-util.ts';
import { createTable, registerDatabase } from './target.ts';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'node_modules/.bin');

let svc: TestService;
let token: string;
let proxy: Listening;
let dbId: string;
const TABLE = `mcp_conf_${Date.now()}`;

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 2);
  dbId = (await registerDatabase(svc, { name: 'conformance' })).id;
  token = (await connect(svc, svc.admin)).tokens.access_token;
  // The conformance runner has no option for a bearer token: this forwarder adds the one the
  // OAuth flow issued, as a connected client would. Everything else passes through unchanged.
  const target = new URL(svc.url);
  proxy = await listen(
    (req, res) =>
      new Promise<void>((done) => {
        const upstream = request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` },
          },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res).on('finish', done);
          },
        );
        req.pipe(upstream);
      }),
  );
});
afterAll(async () => {
  await proxy?.close();
  await svc?.stop();
});

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs one conformance scenario and returns its checks (from the runner's JSON output). */
async function scenario(name: string): Promise<Check[]> {
  const out = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  await run(
    join(BIN, 'conformance'),
    ['server', '--url', `${proxy.url}/mcp`, '--scenario', name, '-o', out],
    { timeout: 60_000 },
  ).catch((err: { stdout?: string }) => err);
  const files: string[] = [];
  for (const entry of await readdir(out, { recursive: true }))
    if (entry.endsWith('checks.json')) files.push(join(out, entry));
  if (files.length === 0) throw new Error(`no results for ${name}`);
  return JSON.parse(await readFile(files[0]!, 'utf8')) as Check[];
}

describe('MCP conformance suite (@modelcontextprotocol/conformance 0.1.13)', () => {
  // The scenarios for a server like this one: lifecycle, ping and tool listing. The others need
  // the suite's own test tools, resources, prompts, logging, sampling or elicitation, which this
  // server does not offer; dns-rebinding-protection is scoped to unauthenticated servers.
  for (const name of ['server-initialize', 'ping', 'tools-list']) {
    it(`passes ${name}`, async () => {
      const checks = await scenario(name);
      expect(checks.length).toBeGreaterThan(0);
      expect(checks.filter((c) => c.status === 'FAILURE')).toEqual([]);
      expect(checks.some((c) => c.status === 'SUCCESS')).toBe(true);
    });
  }
});

describe('MCP Inspector CLI (@modelcontextprotocol/inspector 0.22.0 --cli)', () => {
  const inspector = (args: string[]) =>
    run(
      join(BIN, 'mcp-inspector'),
      [
        '--cli',
        `${svc.url}/mcp`,
        '--transport',
        'http',
        '--header',
        `Authorization: Bearer ${token}`,
        ...args,
      ],
      {
        timeout: 60_000,
      },
    );

  it('lists the tools', async () => {
    const { stdout } = await inspector(['--method', 'tools/list']);
    const names = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names).toContain('run_query');
    expect(names).toHaveLength(9);
  });

  it('runs a query', async () => {
    const { stdout } = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'run_query',
      '--tool-arg',
      `database_id=${dbId}`,
      `sql=select count(*)::int as n from ${TABLE}`,
    ]);
    const result = JSON.parse(stdout) as { structuredContent: { status: string; rows: unknown[][] } };
    expect(result.structuredContent).toMatchObject({ status: 'executed', rows: [[2]] });
  });

  it('is refused without a token', async () => {
    const failed = await run(
      join(BIN, 'mcp-inspector'),
      ['--cli', `${svc.url}/mcp`, '--transport', 'http', '--method', 'tools/list'],
      {
        timeout: 60_000,
      },
    ).then(
      () => null,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(failed).toMatch(/needs an OAuth access token/);
  });
});
