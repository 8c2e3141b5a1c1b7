import { cors } from 'hono/cors';

/**
 * Metadata, registration, token and revocation are called from browser-based MCP clients on
 * other origins; they carry no cookies, so any origin may call them. WWW-Authenticate is exposed
 * so a browser client can read the resource_metadata hint (RFC 9728 §5.1).
 */
export const openCors = () =>
  cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    allowHeaders: ['authorization', 'content-type', 'mcp-protocol-version'],
    exposeHeaders: ['WWW-Authenticate'],
    maxAge: 600,
  });
