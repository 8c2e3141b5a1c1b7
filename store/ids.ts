import { monotonicFactory } from 'ulid';

/** Id prefixes (DESIGN.md Conventions; SPEC.md section 2). */
export type IdPrefix =
  | 'org'
  | 'usr'
  | 'key'
  | 'pat'
  | 'ses'
  | 'wf'
  | 'wfs'
  | 'db'
  | 'crd'
  | 'dash'
  | 'pl'
  | 'act'
  | 'run'
  | 'qr'
  | 'aud'
  | 'grt'
  | 'cgr'
  | 'dpp'
  | 'cli'
  | 'ocd'
  | 'ogr'
  | 'ort'
  | 'sso'
  | 'agt'
  | 'pws';

const ulid = monotonicFactory();

/** A new id: prefix + `_` + 26-character ULID (time-ordered, so ids sort by creation). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

const ID_PATTERN = /^([a-z]+)_([0-9A-HJKMNP-TV-Z]{26})$/;

/** True when `value` is a well-formed id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  const m = ID_PATTERN.exec(value);
  return m !== null && m[1] === prefix;
}
