// The Temporal worker bundles this module: every workflow the service runs is exported here.
// Workflow code is deterministic and imports only `expr/` and types (DESIGN.md Layout).
export { interpretWorkflow } from './interpret.ts';
export { scheduledRunWorkflow } from './scheduled.ts';
