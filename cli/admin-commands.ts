// The admin commands that work on the store (`create-user`, `create-token`, …). They run the same
// way whether the CLI opens the store itself or dev mode runs them for it over the local command
// channel (cli/local-commands.ts) — PGlite serves one connection, which dev mode holds.
import { parseArgs } from 'node:util';
import { verifyAllChains } from '../audit/events.ts';
import type { Config } from '../config/env.ts';
import { createApiKey, createPersonalToken, createUser } from '../identity/manage.ts';
import { listAgents, registerAgent, revokeAgent } from '../registry/agents.ts';
import type { Sql } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { mintSecret } from '../store/secrets.ts';
import {
  findUserByEmail,
  firstOrganization,
  insertServiceAccount,
  ROLES,
  type Role,
} from '../store/users.ts';
import { UsageError } from './errors.ts';

export { UsageError };

/** What a command writes to and the store it works on. */
export interface CommandIo {
  out: { write(text: string): unknown };
  withStore(fn: (sql: Sql) => Promise<void>): Promise<void>;
  /** A command that found a problem (verify-audit) says so here rather than by throwing. */
  fail(code: number): void;
}

type AdminCommand = (config: Config, args: string[], io: CommandIo) => Promise<void>;

export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  async migrate(_config, _args, io) {
    await io.withStore(async (sql) => {
      const [row] = await sql<{ v: number }[]>`select max(version)::int as v from schema_migrations`;
      io.out.write(`store at migration ${row?.v ?? 0}\n`);
    });
  },
  async 'create-user'(_config, args, io) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        role: { type: 'string', default: 'member' },
        password: { type: 'string' },
        name: { type: 'string' },
      },
    });
    if (!values.email) throw new UsageError('--email is required');
    if (!ROLES.includes(values.role as Role))
      throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    await io.withStore(async (sql) => {
      const org = await requireOrg(sql);
      if (await findUserByEmail(sql, org.id, values.email!))
        throw new UsageError(`${values.email} already has an account`);
      const password = values.password ?? mintSecret('pw', newId('usr')).secret.slice(-20);
      const user = await createUser(sql, {
        orgId: org.id,
        email: values.email!,
        name: values.name ?? '',
        role: values.role as Role,
        password,
      });
      io.out.write(
        `created ${user.id} ${user.email} (${user.role})\n${values.password ? '' : `password: ${password}\n`}`,
      );
    });
  },
  async 'create-api-key'(_config, args, io) {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string', default: 'cli' },
        owner: { type: 'string' },
        'service-account': { type: 'string' },
      },
    });
    // A key carries its owner's identity and never more: the operator names whose it is.
    const role = values['service-account'];
    if ((values.owner === undefined) === (role === undefined))
      throw new UsageError('give exactly one of --owner EMAIL or --service-account member|admin');
    if (role !== undefined && role !== 'member' && role !== 'admin')
      throw new UsageError('--service-account takes member or admin');
    await io.withStore(async (sql) => {
      const org = await requireOrg(sql);
      let ownerId: string;
      if (values.owner !== undefined) {
        const owner = await findUserByEmail(sql, org.id, values.owner);
        if (!owner || owner.org_id !== org.id || owner.disabled_at !== null || owner.service_account)
          throw new UsageError(`no active person with email ${values.owner}`);
        ownerId = owner.id;
      } else {
        const account = await insertServiceAccount(sql, {
          id: newId('usr'),
          orgId: org.id,
          name: values.name!,
          role: role as 'member' | 'admin',
        });
        ownerId = account.id;
      }
      const { key, secret } = await createApiKey(sql, {
        orgId: org.id,
        name: values.name!,
        createdBy: null,
        ownerUserId: ownerId,
      });
      io.out.write(`created ${key.id}\n${secret}\n`);
    });
  },
  async 'create-token'(_config, args, io) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        name: { type: 'string', default: 'cli' },
        'expires-days': { type: 'string' },
      },
    });
    if (!values.email) throw new UsageError('--email is required');
    const days = values['expires-days'] ? Number(values['expires-days']) : null;
    if (days !== null && !(Number.isInteger(days) && days > 0))
      throw new UsageError('--expires-days must be a positive whole number');
    await io.withStore(async (sql) => {
      const user = await findUserByEmail(sql, (await requireOrg(sql)).id, values.email!);
      if (!user) throw new UsageError(`no user with email ${values.email}`);
      const expiresAt = days ? new Date(Date.now() + days * 86_400_000) : null;
      const { token, secret } = await createPersonalToken(sql, {
        userId: user.id,
        name: values.name!,
        expiresAt,
      });
      io.out.write(`created ${token.id} for ${user.email}\n${secret}\n`);
    });
  },
  async 'verify-audit'(_config, _args, io) {
    await io.withStore(async (sql) => {
      const reports = await verifyAllChains(sql);
      for (const r of reports) {
        io.out.write(
          r.ok
            ? `${r.orgId}: ok, ${r.entries} entries\n`
            : `${r.orgId}: BROKEN at seq ${r.broken?.seq} (${r.broken?.id ?? 'no entry'}): ${r.broken?.reason}\n`,
        );
      }
      if (reports.some((r) => !r.ok)) io.fail(1);
    });
  },
  async agent(_config, args, io) {
    const [sub, ...rest] = args;
    if (sub === 'register') {
      const { values } = parseArgs({ args: rest, options: { name: { type: 'string' } } });
      if (!values.name) throw new UsageError('--name is required');
      await io.withStore(async (sql) => {
        const org = await requireOrg(sql);
        const { agent, token } = await registerAgent({ sql }, { orgId: org.id, actor: null }, values.name!);
        io.out.write(`created ${agent.id} (${agent.name})\n${token}\n`);
      });
      return;
    }
    if (sub === 'revoke') {
      const { values } = parseArgs({ args: rest, options: { id: { type: 'string' } } });
      if (!values.id) throw new UsageError('--id is required');
      await io.withStore(async (sql) => {
        await revokeAgent({ sql }, { orgId: (await requireOrg(sql)).id, actor: null }, values.id!).catch(
          () => {
            throw new UsageError(`no live agent ${values.id}`);
          },
        );
        io.out.write(`revoked ${values.id}\n`);
      });
      return;
    }
    if (sub === 'list') {
      await io.withStore(async (sql) => {
        for (const a of await listAgents({ sql }, (await requireOrg(sql)).id))
          io.out.write(
            `${a.id} ${a.name} ${a.revoked ? 'revoked' : a.connected ? 'connected' : 'not connected'} last seen ${a.last_seen_at ?? 'never'} version ${a.version ?? '-'}\n`,
          );
      });
      return;
    }
    throw new UsageError(`unknown agent command ${sub}`);
  },
};

async function requireOrg(sql: Sql) {
  const org = await firstOrganization(sql);
  if (!org) throw new UsageError('the store has no organization yet: start the service once (serve or dev)');
  return org;
}

/**
 * Runs an admin command and answers with its exit code: 0, the code it asked for, 2 for a usage
 * error (message on `err`), 1 for anything else (a one-line reason, never a stack trace).
 */
export async function runAdminCommand(
  name: string,
  args: string[],
  config: Config,
  io: Omit<CommandIo, 'fail'>,
  err: { write(text: string): unknown },
): Promise<number> {
  const command = ADMIN_COMMANDS[name];
  if (!command) {
    err.write(`countersign ${name}: not an admin command\n`);
    return 2;
  }
  let code = 0;
  try {
    await command(config, args, { ...io, fail: (c) => (code = c) });
    return code;
  } catch (e) {
    if (e instanceof UsageError) {
      err.write(`countersign ${name}: ${e.message}\n`);
      return 2;
    }
    err.write(`countersign ${name}: cannot continue: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
