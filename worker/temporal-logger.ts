import { type LogLevel, type LogMetadata, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { Logger } from '../core/logger.ts';

let installed = false;

/**
 * Sends the Temporal SDK's own log lines through our JSON logger, at warn and above unless
 * the service logs at debug: its info lines (bundle sizes, state changes) drown the rest. The
 * SDK core's (Rust) lines are forwarded too, instead of going raw (and ANSI-coloured) to the
 * console. `metricsAddress`: where the core serves its Prometheus metrics (worker/http.ts).
 * The Runtime is process-wide and can be installed once.
 */
export function installTemporalLogger(logger: Logger, options: { metricsAddress?: string } = {}): void {
  if (installed) return;
  installed = true;
  const child = logger.child({ component: 'temporal-sdk' });
  const verbose = logger.isLevelEnabled('debug');
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields = { ...(meta ?? {}) };
    switch (level) {
      case 'ERROR':
        child.error(fields, message);
        break;
      case 'WARN':
        child.warn(fields, message);
        break;
      default:
        if (verbose) child.debug(fields, message);
    }
  };
  Runtime.install({
    logger: {
      log,
      trace: (m, meta) => log('TRACE', m, meta),
      debug: (m, meta) => log('DEBUG', m, meta),
      info: (m, meta) => log('INFO', m, meta),
      warn: (m, meta) => log('WARN', m, meta),
      error: (m, meta) => log('ERROR', m, meta),
    },
    telemetryOptions: {
      logging: {
        filter: makeTelemetryFilterString({ core: verbose ? 'DEBUG' : 'WARN', other: 'ERROR' }),
        forward: {},
      },
      ...(options.metricsAddress
        ? { metrics: { prometheus: { bindAddress: options.metricsAddress, useSecondsForDurations: true } } }
        : {}),
    },
  });
}
