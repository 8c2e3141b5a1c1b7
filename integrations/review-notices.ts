import type { Logger } from '../core/logger.ts';
import type { DatabaseRow } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { QueryRequestRow } from '../store/query-requests.ts';
import { findUserById, listUsers, type UserRow } from '../store/users.ts';

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

/** Sends one e-mail (integrations/mail.ts `Mailer.send` fits). */
export type SendMail = (message: { to: string; subject: string; text: string }) => Promise<void>;

/**
 * E-mails everyone who may review the request: active people of the organization, other than
 * its author, who can see the database (a restricted one: super admins and granted people).
 */
export function mailRequestNotifier(
  deps: {
    sql: Tx;
    logger: Logger;
    baseUrl: string;
    /** Whether the person can see the database (governance/access.ts canSee; passed in, no cycle). */
    canSee: (db: DatabaseRow, person: { userId: string; role: UserRow['role'] }) => Promise<boolean>;
  },
  send: SendMail,
): RequestNotifier {
  return {
    requestOpened(request, db) {
      void (async () => {
        const author = await findUserById(deps.sql, request.author_user_id);
        const people = await listUsers(deps.sql, db.org_id);
        for (const person of people) {
          if (person.id === request.author_user_id || person.disabled_at || person.service_account) continue;
          if (!(await deps.canSee(db, { userId: person.id, role: person.role }))) continue;
          await send({
            to: person.email,
            subject: `Review requested: ${request.id} on ${db.name}`,
            text: requestText(request, db, author?.email ?? request.author_user_id, deps.baseUrl)
              // People review on the Reviews page, not through the API.
              .replace(`${deps.baseUrl}/api/v1/desk/query-requests/${request.id}`, `${deps.baseUrl}/reviews`),
          });
        }
      })().catch((err: unknown) => {
        deps.logger.warn(
          { requestId: request.id, databaseId: db.id, err: { message: (err as Error).message } },
          'query request e-mail failed',
        );
      });
    },
  };
}

/** Several notifiers as one (chat and e-mail). */
export function allNotifiers(...notifiers: RequestNotifier[]): RequestNotifier {
  return {
    requestOpened(request, db) {
      for (const n of notifiers) n.requestOpened(request, db);
    },
  };
}
