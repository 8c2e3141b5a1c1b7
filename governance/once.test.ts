import { describe, expect, it } from 'vitest';
import { checkSessionName } from '../adapters/values.ts';
import { stepTagPrefix } from './once.ts';

describe('step session tags', () => {
  it('fit a Postgres application_name and an XA id with the attempt, and are safe in SQL text', () => {
    const prefix = stepTagPrefix({
      runId: 'run_01M8BXV3MPQN6R0WZRBFZ7PH56',
      stepId: 'wfs_01M8BXT5HWP8YRK41Y6HPBSE3A',
    });
    expect(prefix).toBe('cs:01M8BXV3MPQN6R0WZRBFZ7PH56:01M8BXT5HWP8YRK41Y6HPBSE3A:');
    expect(checkSessionName(`${prefix}999`)).toBe(`${prefix}999`);
  });

  it('digests ids of another shape instead of writing them into the statement', () => {
    const prefix = stepTagPrefix({ runId: "run_x'; drop table t; --", stepId: 'step one' });
    expect(prefix).toMatch(/^cs:[0-9a-f]{26}:[0-9a-f]{26}:$/);
    expect(() => checkSessionName("cs:a'b")).toThrow('invalid session tag');
  });
});
