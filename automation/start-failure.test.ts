import { describe, expect, it } from 'vitest';
import { startFailureReason, startMayHaveHappened } from './start-failure.ts';

describe('startFailureReason', () => {
  it('reads the gRPC reason under the SDK wrapper', () => {
    const grpc = Object.assign(
      new Error('3 INVALID_ARGUMENT: search attribute CountersignWorkflowId is not defined'),
      {
        details: 'search attribute CountersignWorkflowId is not defined',
      },
    );
    const wrapped = Object.assign(new Error('Failed to start Workflow'), { cause: grpc });
    expect(startFailureReason(wrapped)).toBe('search attribute CountersignWorkflowId is not defined');
  });
  it('says something even without a cause, and cuts long text', () => {
    expect(startFailureReason(new Error('Failed to start Workflow'))).toBe('Temporal did not start it');
    expect(startFailureReason(new Error('x'.repeat(400)))).toHaveLength(301);
  });
});

describe('startMayHaveHappened', () => {
  it('is true when the answer was lost (deadline, unavailable), under the SDK wrapper', () => {
    const lost = Object.assign(new Error('4 DEADLINE_EXCEEDED: Deadline exceeded'), { code: 4 });
    expect(startMayHaveHappened(Object.assign(new Error('Failed to start Workflow'), { cause: lost }))).toBe(
      true,
    );
    expect(startMayHaveHappened(new Error('14 UNAVAILABLE: Connection dropped'))).toBe(true);
  });
  it('is false for a refusal', () => {
    const refused = Object.assign(new Error('3 INVALID_ARGUMENT: bad search attribute'), { code: 3 });
    expect(
      startMayHaveHappened(Object.assign(new Error('Failed to start Workflow'), { cause: refused })),
    ).toBe(false);
    expect(startMayHaveHappened(new Error('Failed to start Workflow'))).toBe(false);
  });
});
