// What the service needs of a Temporal namespace, made sure of at start: the search
// attributes every run carries. Without them Temporal refuses to start any run, so a process
// that cannot create them stops and names the command an operator runs instead.
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import type { Logger } from '../core/logger.ts';
import type { TemporalHandle } from '../core/temporal.ts';
import { SEARCH_ATTRIBUTE_ORG_ID, SEARCH_ATTRIBUTE_WORKFLOW_ID } from '../workflows/types.ts';

/** Keyword attributes: runs are listed from visibility by definition and by organization. */
export const REQUIRED_SEARCH_ATTRIBUTES = [SEARCH_ATTRIBUTE_WORKFLOW_ID, SEARCH_ATTRIBUTE_ORG_ID] as const;

/** The one command that creates them, for the operator when the service may not. */
export function searchAttributeCommand(namespace: string): string {
  const names = REQUIRED_SEARCH_ATTRIBUTES.map((n) => `--name ${n} --type Keyword`).join(' ');
  return `temporal operator search-attribute create --namespace ${namespace} ${names}`;
}

export class TemporalSetupError extends Error {}

/**
 * Idempotent: lists the namespace's custom search attributes and adds the missing ones through
 * the operator service. Several replicas starting at once may race; "already exists" from the
 * loser is success. Waits until the server lists them, since some visibility stores apply an
 * addition asynchronously.
 */
export async function ensureSearchAttributes(temporal: TemporalHandle, logger: Logger): Promise<void> {
  const { namespace } = temporal;
  const ops = temporal.connection.operatorService;
  const missing = async () => {
    const { customAttributes } = await ops.listSearchAttributes({ namespace });
    return REQUIRED_SEARCH_ATTRIBUTES.filter((name) => !(name in (customAttributes ?? {})));
  };
  const absent = await missing();
  if (absent.length === 0) return;
  const keyword = encodeSearchAttributeIndexedValueType('KEYWORD')!;
  try {
    await ops.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(absent.map((name) => [name, keyword])),
    });
  } catch (err) {
    const e = err as { code?: number; details?: string; message?: string };
    // gRPC 6 ALREADY_EXISTS: another replica added them first.
    if (e.code !== 6) {
      throw new TemporalSetupError(
        `the Temporal namespace ${namespace} lacks the search attributes ${absent.join(', ')} and this ` +
          `process could not create them (${e.details ?? e.message ?? 'unknown error'}); create them once with: ` +
          searchAttributeCommand(namespace),
      );
    }
  }
  for (let i = 0; i < 60 && (await missing()).length > 0; i++) await new Promise((r) => setTimeout(r, 500));
  const still = await missing();
  if (still.length > 0)
    throw new TemporalSetupError(
      `the Temporal namespace ${namespace} still lacks ${still.join(', ')} after creating them; check with: ` +
        `temporal operator search-attribute list --namespace ${namespace}`,
    );
  logger.info({ namespace, searchAttributes: absent }, 'created the Temporal search attributes runs carry');
}
