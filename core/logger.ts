import pino from 'pino';
import type { Config } from '../config/env.ts';
import { currentTraceIds } from './tracing.ts';

export type Logger = pino.Logger;

/**
 * Logs are JSON lines. Anything that could carry a secret is redacted by path as a second
 * line of defence; the first is never putting secrets in log objects at all.
 */
export function createLogger(level: Config['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'countersign' },
      // With tracing on, a line written inside a span names its trace and span (core/tracing.ts).
      // A new object each time: pino merges the line's fields into it.
      mixin: () => currentTraceIds() ?? {},
      redact: {
        paths: [
          '*.password',
          '*.secret',
          '*.token',
          '*.authorization',
          '*["x-api-key"]',
          '*.cookie',
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
