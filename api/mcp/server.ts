// The MCP server of one request: tools/list and tools/call over the tools of api/mcp/tools-*.ts,
// for either protocol revision (api/mcp/index.ts decides which one a request speaks).
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import * as v from 'valibot';
import { wasAudited } from '../../audit/events.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { mcpToolCalls } from '../../core/metrics.ts';
import { inSpan } from '../../core/tracing.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import { auditToolCall, type ToolContext, type ToolDef, toolContext } from './context.ts';
import { toolInputSchema } from './tool-schema.ts';
import {
  cancelQueryTool,
  getQueryRequestTool,
  queryHistoryTool,
  runQueryTool,
  sampleTableTool,
} from './tools-query.ts';
import {
  getDatabaseSchemaTool,
  getDataProtectionTool,
  listDatabasesTool,
  searchSchemaTool,
} from './tools-schema.ts';

/** Every tool, in the order tools/list shows them (api/oauth/README.md lists their shapes). */
export const TOOLS = [
  listDatabasesTool,
  getDatabaseSchemaTool,
  searchSchemaTool,
  sampleTableTool,
  runQueryTool,
  getQueryRequestTool,
  cancelQueryTool,
  getDataProtectionTool,
  queryHistoryTool,
] as ToolDef[];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** The tool of that name, if there is one. */
export function toolNamed(name: string): ToolDef | undefined {
  return BY_NAME.get(name);
}

/** tools/list: the same for every caller and request, so built once. */
const TOOL_LIST: Tool[] = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: toolInputSchema(t.input) as Tool['inputSchema'],
  annotations: { title: t.title, readOnlyHint: t.readOnly, openWorldHint: false },
}));

/**
 * The SDK validates elicitation answers with a JSON-schema validator, and builds one (an Ajv
 * instance: ~0.5 ms and ~265 KB) per Server unless given one. These servers never elicit, and a
 * Server is made per request: one validator for the process.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

/**
 * 2026-07-28 utilities/caching: list results and server/discover carry ttlMs and cacheScope. The
 * tool list changes only with a deployment, so a client may keep it a few minutes; it is answered
 * to an authenticated caller, so only that caller may cache it ('private').
 */
const CACHE = { ttlMs: 300_000, cacheScope: 'private' } as const;

/** Who answers: initialize's serverInfo, and on 2026-07-28 every result's `_meta`. */
export const SERVER_INFO = { name: 'countersign', title: 'Countersign', version: '0.1.0' };

export function createMcpServer(deps: Deps, caller: OAuthCaller): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions:
      'Countersign governs database access. You act as the user who connected you, with their permissions. ' +
      'Start with list_databases, then get_database_schema or search_schema, then run_query.',
    jsonSchemaValidator: VALIDATOR,
    cacheHints: { 'tools/list': CACHE, 'server/discover': CACHE },
  });
  server.setRequestHandler('tools/list', () => ({ tools: TOOL_LIST }));
  server.setRequestHandler('tools/call', async (request) => {
    const tool = toolNamed(request.params.name);
    const ctx = toolContext(deps, caller);
    if (!tool) {
      // Every call leaves an audit entry (SPEC.md 1.4), a refused one too: a client probing for
      // tools is seen in the log. The name is the client's: kept to 200 characters there.
      const name = request.params.name.slice(0, 200);
      await auditToolCall(ctx, {
        tool: name,
        args: request.params.arguments ?? {},
        databaseId: null,
        outcome: 'denied',
        detail: `unknown tool ${name}`,
      });
      // tools §Error Handling (2025-11-25, 2026-07-28): an unknown tool is a protocol error
      // (-32602), not a tool result; a model has nothing to correct in a tool that is not there.
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    mcpToolCalls.inc({ route: 'sdk' });
    return callTool(ctx, tool, request.params.arguments ?? {});
  });
  return server;
}

/**
 * Runs one tool call. Refusals and failures are tool results with isError (MCP 2025-11-25
 * tools §Error Handling: the model should see them), never protocol errors. Every call leaves
 * an audit entry: the pipeline writes it for queries, this function for everything else.
 */
export function callTool(ctx: ToolContext, tool: ToolDef, args: unknown): Promise<CallToolResult> {
  // One span per tool call (named as OpenTelemetry's MCP conventions name it), the parent of its
  // governed queries; never its arguments.
  return inSpan(
    `tools/call ${tool.name}`,
    { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool.name },
    () => runTool(ctx, tool, args),
  );
}

async function runTool(ctx: ToolContext, tool: ToolDef, args: unknown): Promise<CallToolResult> {
  const parsed = v.safeParse(tool.input, args);
  if (!parsed.success) {
    const detail = parsed.issues.map((i) => `${v.getDotPath(i) ?? 'arguments'}: ${i.message}`).join('; ');
    await auditToolCall(ctx, { tool: tool.name, args, databaseId: null, outcome: 'denied', detail });
    return toolError(`invalid arguments: ${detail}`);
  }
  const databaseId =
    typeof (args as { database_id?: unknown }).database_id === 'string'
      ? (args as { database_id: string }).database_id
      : null;
  try {
    const result = (await tool.run(ctx, parsed.output)) as Record<string, unknown>;
    if (!tool.runsQueries)
      await auditToolCall(ctx, {
        tool: tool.name,
        args,
        databaseId: knownDatabase(result, databaseId),
        outcome: 'allowed',
      });
    return structuredResult(result);
  } catch (err) {
    if (!(err instanceof AppError)) {
      ctx.deps.logger.error(
        { err: { name: (err as Error).name, message: (err as Error).message }, tool: tool.name },
        'mcp tool failed',
      );
    }
    const message = err instanceof AppError ? err.detail : 'the tool failed';
    // What the pipeline refused or saw fail it has audited; anything else is this call's to record.
    if (!wasAudited(err)) {
      await auditToolCall(ctx, {
        tool: tool.name,
        args,
        databaseId: null,
        outcome: err instanceof AppError && err.status < 500 ? 'denied' : 'failed',
        detail: message,
      });
    }
    return toolError(message);
  }
}

/** Results whose text is exactly their structuredContent as JSON (api/mcp/tool-call.ts answerBody). */
const textIsStructured = new WeakSet<CallToolResult>();

export function structuredResult(result: Record<string, unknown>): CallToolResult {
  const answer = {
    content: [{ type: 'text' as const, text: JSON.stringify(result) }],
    structuredContent: result,
  };
  textIsStructured.add(answer);
  return answer;
}

/** The JSON of a result's structuredContent, when its text is that very JSON; else null. */
export function structuredText(result: CallToolResult): string | null {
  if (!textIsStructured.has(result)) return null;
  const only = result.content[0];
  return only?.type === 'text' ? only.text : null;
}

/** The audit names a database only once the tool proved the caller may see it. */
function knownDatabase(result: Record<string, unknown>, asked: string | null): string | null {
  return typeof result.database_id === 'string' ? result.database_id : asked;
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
