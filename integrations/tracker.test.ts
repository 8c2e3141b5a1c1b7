import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addedLabelIds, readIssueInputs, verifyWebhook, WebhookRejected } from './tracker.ts';

describe('readIssueInputs (SPEC.md 2.1: `#### <input>` then the value on the next line)', () => {
  it('reads each heading’s next line and ignores other headings', () => {
    const text = '# Title\n#### ticket\nSUP-1\n\n#### amount\n\n  42\n#### other\nx\n#### note';
    expect(readIssueInputs(text, ['ticket', 'amount', 'note'])).toEqual({ ticket: 'SUP-1', amount: '  42' });
  });
  it('keeps the first occurrence', () => {
    expect(readIssueInputs('#### a\none\n#### a\ntwo', ['a'])).toEqual({ a: 'one' });
  });
});

describe('verifyWebhook (Linear: HMAC-SHA256 hex of the raw body, signed timestamp within a minute)', () => {
  const secret = 's3';
  const sign = (body: string) => createHmac('sha256', secret).update(body).digest('hex');
  it('accepts a fresh, correctly signed body', () => {
    const body = JSON.stringify({ type: 'Issue', webhookTimestamp: 1000 });
    expect(verifyWebhook(secret, Buffer.from(body), sign(body), 1000 + 59_000).type).toBe('Issue');
  });
  it.each([
    ['a wrong signature', (b: string) => sign(`${b} `), 1000],
    ['no signature', () => undefined, 1000],
    ['an old timestamp', sign, 1000 + 61_000],
  ])('refuses %s', (_what, signature, now) => {
    const body = JSON.stringify({ type: 'Issue', webhookTimestamp: 1000 });
    expect(() => verifyWebhook(secret, Buffer.from(body), signature(body), now)).toThrow(WebhookRejected);
  });
});

describe('addedLabelIds', () => {
  it('is every label on create and only new ones on update', () => {
    expect(addedLabelIds({ action: 'create', type: 'Issue', data: { labelIds: ['a'] } })).toEqual(['a']);
    expect(
      addedLabelIds({
        action: 'update',
        type: 'Issue',
        data: { labelIds: ['a', 'b'] },
        updatedFrom: { labelIds: ['a'] },
      }),
    ).toEqual(['b']);
    expect(addedLabelIds({ action: 'update', type: 'Issue', data: { labelIds: ['a'] } })).toEqual([]);
    expect(addedLabelIds({ action: 'create', type: 'Comment', data: { labelIds: ['a'] } })).toEqual([]);
  });
});
