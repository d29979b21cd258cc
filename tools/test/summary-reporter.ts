import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest test files the closing report names (where the suite's time goes). */
const SLOWEST = 15;

/**
 * Prints the slowest test files, then the plain closing line 'N passed, N failed, N skipped' that
 * CI reads in any language.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) {
        failed++;
      }
    }
    const timed = testModules
      .map((mod) => ({ file: relative(process.cwd(), mod.moduleId), ms: mod.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms);
    if (timed.length > 1) {
      const total = timed.reduce((sum, t) => sum + t.ms, 0);
      const lines = timed.slice(0, SLOWEST).map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.file}`);
      process.stdout.write(
        `\nSlowest test files (of ${timed.length}, ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n`,
      );
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
