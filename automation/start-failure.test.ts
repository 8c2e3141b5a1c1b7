import { describe, expect, it } from 'vitest';
import { startFailureReason } from './start-failure.ts';

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
