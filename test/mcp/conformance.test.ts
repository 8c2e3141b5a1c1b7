// Third-party MCP tools against the real server: the MCP conformance suite (the server scenarios
// of both protocol revisions that apply to a server offering only these tools, and the
// authorization-server scenarios against our AS) and the MCP Inspector CLI, each with a token
// from the real OAuth flow. README.md (MCP, Conformance) lists the scenarios left out and why.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestService, type TestService } from '../helpers/service.ts';
import { authorizeInBrowser, Browser, connect, discover, register } from '../oauth/flow.ts';
import { type Listening, listen } from '../peers/http-util.ts';
import { createTable, registerDatabase } from './target.ts';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'node_modules/.bin');

let svc: TestService;
let token: string;
let proxy: Listening;
let dbId: string;
let node: string;
const TABLE = `mcp_conf_${Date.now()}`;

/**
 * The conformance CLI uses fs.globSync, so it needs Node 22 or later. The test's own Node when it
 * is one; else the project's Node (the `node` devDependency puts it in node_modules/.bin); else
 * $CONFORMANCE_NODE. No such Node fails the suite with the reason: it is never skipped.
 */
async function conformanceNode(): Promise<string> {
  const candidates = [process.execPath, join(BIN, 'node'), process.env.CONFORMANCE_NODE ?? ''];
  for (const candidate of candidates) {
    if (!candidate || !existsSync(candidate)) continue;
    const { stdout } = await run(candidate, ['--version']).catch(() => ({ stdout: '' }));
    if (Number(/^v(\d+)\./.exec(stdout.trim())?.[1] ?? 0) >= 22) return candidate;
  }
  throw new Error(
    `the MCP conformance CLI needs Node >= 22; found none (this is ${process.version}, no node_modules/.bin/node)`,
  );
}

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 2);
  dbId = (await registerDatabase(svc, { name: 'conformance' })).id;
  token = (await connect(svc, svc.admin)).tokens.access_token;
  // The conformance runner has no option for a bearer token: this forwarder adds the one the
  // OAuth flow issued, as a connected client would. It stands where a reverse proxy would stand
  // in front of the service under its public name, so a request that names the forwarder's own
  // origin names the service's (dns-rebinding-protection sends Origin with its localhost URL);
  // any other Origin, and everything else, passes through unchanged.
  const target = new URL(svc.url);
  proxy = await listen(
    (req, res) =>
      new Promise<void>((done) => {
        const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token}` };
        const own = new URL(proxy.url);
        if (headers.origin === own.origin || headers.origin === `http://localhost:${own.port}`)
          headers.origin = target.origin;
        const upstream = request(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
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

/** Every checks.json the runner wrote under `out`, by scenario (its directory name names it). */
async function results(out: string): Promise<Map<string, Check[]>> {
  const byScenario = new Map<string, Check[]>();
  for (const entry of await readdir(out, { recursive: true })) {
    if (!entry.endsWith('checks.json')) continue;
    const dir = entry.split('/')[0]!;
    const name = dir.replace(/^(server|authorization-server)-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
    byScenario.set(name, JSON.parse(await readFile(join(out, entry), 'utf8')) as Check[]);
  }
  return byScenario;
}

/** Runs every server scenario a revision requires (`--requirements`, one run of the CLI). */
async function serverScenarios(revision: string): Promise<Map<string, Check[]>> {
  const out = await mkdtemp(join(tmpdir(), `mcp-conformance-${revision}-`));
  // The run exits non-zero while any scenario fails, and some cannot apply here (NOT_APPLICABLE):
  // the checks.json files say which, and are what is asserted.
  await run(
    node,
    [join(BIN, 'conformance'), 'server', '--url', `${proxy.url}/mcp`, '--requirements', revision, '-o', out],
    { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => err);
  return results(out);
}

/**
 * The scenarios that apply to this server, with the checks of each that cannot: they need one of
 * the suite's fixed test tools, or prompts or resources, which a product server does not have.
 */
const APPLICABLE: Record<string, Record<string, string[]>> = {
  '2025-11-25': {
    'server-initialize': [],
    ping: [],
    'tools-list': [],
    'dns-rebinding-protection': [],
  },
  '2026-07-28': {
    'server-stateless': [
      // Each needs one of the suite's diagnostic tools: test_missing_capability (it needs
      // sampling), test_streaming_elicitation, test_logging_tool. (Before unknown tools were a
      // protocol error here, the last two "passed" against our error result: proving nothing.)
      'sep-2575-server-rejects-undeclared-capability',
      'sep-2575-missing-capability-http-400',
      'sep-2575-http-server-no-independent-requests-on-stream',
      'sep-2575-server-no-log-without-loglevel',
    ],
    'tools-list': [],
    caching: [
      // prompts/list, resources/list, resources/templates/list: no prompts, no resources.
      'sep-2549-prompts-list-caching-hints',
      'sep-2549-resources-list-caching-hints',
      'sep-2549-resources-templates-list-caching-hints',
    ],
    'http-header-validation': [],
    'dns-rebinding-protection': [],
    'input-required-result-unsupported-methods': [],
  },
};

/** Why every other scenario does not apply (README.md, Conformance, lists the same). */
const NOT_APPLICABLE: Array<[RegExp, string]> = [
  [
    /^(tools-call-.*|json-schema-2020-12)$/,
    "calls one of the suite's fixed test tools (test_simple_text, test_image_content, json_schema_2020_12_tool…)",
  ],
  [/^prompts-/, 'the server has no prompts'],
  [/^(resources-.*|sep-2164-resource-not-found)$/, 'the server has no resources'],
  [/^completion-complete$/, 'nothing to complete: no prompts, no resource templates'],
  [/^logging-set-level$/, 'no logging capability (and 2026-07-28 removed logging/setLevel)'],
  [
    /^(elicitation-.*|input-required-result-.*)$/,
    'asks for input through test tools that elicit or sample; this server never asks the client for input',
  ],
  [/^tasks-/, 'tasks extension not offered: a query awaiting review is a request id to poll'],
  [/^server-(session-lifecycle|sse-polling|sse-multiple-streams)$/, 'sessions and SSE streams: none here'],
  [
    /^http-custom-header-server-validation$/,
    'needs a tool that mirrors a parameter into a header (x-mcp-header)',
  ],
];

describe('MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12)', () => {
  // Here, not for the whole file: the Inspector CLI below runs on any Node.
  beforeAll(async () => {
    node = await conformanceNode();
  });

  for (const [revision, scenarios] of Object.entries(APPLICABLE)) {
    it(`passes the server scenarios that apply, --requirements ${revision}`, async () => {
      const byScenario = await serverScenarios(revision);
      for (const [name, notApplicable] of Object.entries(scenarios)) {
        const checks = byScenario.get(name);
        expect(checks, `${revision} ${name} wrote no results`).toBeDefined();
        const applicable = checks!.filter((c) => !notApplicable.includes(c.id));
        expect(
          applicable.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING'),
          `${revision} ${name}`,
        ).toEqual([]);
        expect(
          applicable.filter((c) => c.status === 'SUCCESS').length,
          `${revision} ${name}`,
        ).toBeGreaterThan(0);
        // The checks left out still run: they are there, not renamed or gone.
        for (const id of notApplicable)
          expect(
            checks!.map((c) => c.id),
            `${name} ${id}`,
          ).toContain(id);
      }
      // A scenario a later suite adds is decided on, not passed over.
      const undecided = [...byScenario.keys()].filter(
        (name) => !(name in scenarios) && !NOT_APPLICABLE.some(([re]) => re.test(name)),
      );
      expect(undecided, `${revision}: scenarios neither applicable nor explained`).toEqual([]);
    }, 120_000);
  }

  it('passes the authorization-server scenarios against our AS (metadata, authorization code grant)', async () => {
    // The runner waits for the redirect on its own loopback callback; a client registered for it
    // (DCR, public) gets the code through a signed-in browser that approves the consent screen.
    const port = await freePort();
    const d = await discover(svc);
    const client = await register(d, {
      client_name: 'MCP conformance',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
    });
    const out = await mkdtemp(join(tmpdir(), 'mcp-conformance-as-'));
    const child = spawn(
      node,
      [
        join(BIN, 'conformance'),
        'authorization',
        '--url',
        svc.url,
        '--client-id',
        client.client_id,
        '--resource',
        `${svc.url}/mcp`,
        '--port',
        String(port),
        '-o',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const authorizationUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no authorization URL: ${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const m = new RegExp(`${svc.url}/oauth/authorize\\?\\S+`).exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
    });
    const browser = new Browser(svc);
    const back = await authorizeInBrowser(browser, authorizationUrl, svc.admin);
    expect(back.origin).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(back)).status).toBe(200);
    await exited;

    const byScenario = await results(out);
    for (const name of ['authorization-server-metadata-endpoint', 'authorization-code-grant']) {
      const checks = byScenario.get(name);
      expect(checks, `${name} wrote no results`).toBeDefined();
      expect(
        checks!.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO'),
        name,
      ).toEqual([]);
      expect(
        checks!.some((c) => c.status === 'SUCCESS'),
        name,
      ).toBe(true);
    }
  }, 120_000);
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
