// The bench baseline (bench/workflows.ts): a bare Temporal workflow with three empty activities.
import { proxyActivities } from '@temporalio/workflow';

interface BareActivities {
  a(): Promise<void>;
  b(): Promise<void>;
  c(): Promise<void>;
}

const { a, b, c } = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds' });

export async function bareThreeActivities(): Promise<void> {
  await a();
  await b();
  await c();
}
