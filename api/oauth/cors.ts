import { cors } from 'hono/cors';

/**
 * Metadata, registration, token and revocation are called from browser-based MCP clients on
 * other origins (ChatGPT calls registration and token from its web origin); they carry no
 * cookies, so any origin may call them. Request headers are reflected rather than listed: a
 * browser client may add its own (e.g. `mcp-protocol-version`, tracing headers), `*` would not
 * cover `authorization` (Fetch standard, CORS-safelisted names), and without credentials nothing
 * a header could carry is ambient. WWW-Authenticate is exposed so a browser client can read the
 * resource_metadata hint (RFC 9728 §5.1).
 */
export const openCors = () =>
  cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    exposeHeaders: ['WWW-Authenticate'],
    maxAge: 600,
  });
