import type { Context } from 'hono';
import type { Caller, PersonActor } from '../audit/actors.ts';
import type { AppEnv } from './env.ts';

/** The authenticated request as a domain function's caller (audit/actors.ts). */
export function restCaller(c: Context<AppEnv>): Caller<PersonActor> {
  return { orgId: c.get('principal').orgId, actor: c.get('actor'), origin: 'user' };
}
