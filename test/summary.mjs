// Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped") from vitest's
// JSON report, which vitest.config.ts writes to test-output/vitest-results.json.
import { readFileSync } from 'node:fs';

const report = JSON.parse(
  readFileSync(new URL('../test-output/vitest-results.json', import.meta.url), 'utf8'),
);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
process.exit(report.numFailedTests > 0 || report.numTotalTests === 0 ? 1 : 0);
