import type { Logger } from '../core/logger.ts';
import type { DatabaseRow } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { QueryRequestRow } from '../store/query-requests.ts';
import { findUserById } from '../store/users.ts';

/** Tells reviewers that a query request is waiting (the database's `slack_channel`, SPEC.md 2.2). */
export interface RequestNotifier {
  /** Never throws: a chat outage must not fail or slow the request it reports. */
  requestOpened(request: QueryRequestRow, db: DatabaseRow): void;
}

/** Posts one chat message (integrations/chat.ts `ChatClient.post` fits). */
export type PostMessage = (message: { channel: string; text: string; threadTs: null }) => Promise<unknown>;

const STATEMENT_PREVIEW = 600;

/** A notifier that posts to the database's chat channel, when it has one. */
export function chatRequestNotifier(
  deps: { sql: Tx; logger: Logger; baseUrl: string },
  post: PostMessage,
): RequestNotifier {
  return {
    requestOpened(request, db) {
      if (!db.slack_channel) return;
      const channel = db.slack_channel;
      void (async () => {
        const author = await findUserById(deps.sql, request.author_user_id);
        await post({
          channel,
          text: requestText(request, db, author?.email ?? request.author_user_id, deps.baseUrl),
          threadTs: null,
        });
      })().catch((err: unknown) => {
        deps.logger.warn(
          { requestId: request.id, databaseId: db.id, err: { message: (err as Error).message } },
          'query request notification failed',
        );
      });
    },
  };
}

/** The message: who asks what on which database, how many reviews it needs, and where to review. */
export function requestText(
  request: QueryRequestRow,
  db: DatabaseRow,
  author: string,
  baseUrl: string,
): string {
  const statement =
    request.statement.length > STATEMENT_PREVIEW
      ? `${request.statement.slice(0, STATEMENT_PREVIEW)}…`
      : request.statement;
  const n = request.reviews_required;
  return [
    `New query request ${request.id} on *${db.name}* by ${author} (${request.classification}), needs ${n} approval${n === 1 ? '' : 's'}:`,
    '```',
    statement.replaceAll('```', "'''"),
    '```',
    `${baseUrl}/api/v1/desk/query-requests/${request.id}`,
  ].join('\n');
}
