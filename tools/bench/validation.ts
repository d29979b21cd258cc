/**
 * `npm run bench -- --only validation [--runs N]`: how long the write path's validator (structure,
 * cardinality, formats, required bindings, every invariant of the definitions) takes per resource,
 * over the R4 specification's examples (../shared/data/fhir-r4-spec), in this process. One warm-up
 * pass compiles what the validator caches per type (FHIRPath invariants); then N timed passes.
 * Prints, per resource type, the examples, median and p99 time per resource, and the same over all.
 * Write throughput with all of this on is the `core` group's create workloads.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Resource } from '@hearth/core';
import { createValidator } from '../../apps/server/src/resources/definitions.js';
import { packageResources } from '../../packages/core/src/validation/spec-data.test-util.js';
import { median } from './load.js';

/** Beside the repository, as the tests read it (the benchmark runs from the repository's root). */
const SPEC_EXAMPLES = resolve(
  process.env.HEARTH_BENCH_SPEC_EXAMPLES || '../shared/data/fhir-r4-spec/hl7.fhir.r4.examples-4.0.1.tgz',
);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function runValidationBench(options: { runs: number }, log: (line: string) => void): void {
  if (!existsSync(SPEC_EXAMPLES)) {
    log(`no ${SPEC_EXAMPLES}: the validation benchmark needs the shared R4 examples`);
    return;
  }
  const examples = [...packageResources(SPEC_EXAMPLES)].map(([, r]) => r as unknown as Resource);
  const validator = createValidator();
  log(`validating ${examples.length} R4 examples: 1 warm-up pass, ${options.runs} timed...`);
  for (const resource of examples) {
    validator.validate(resource);
  }
  const byType = new Map<string, number[]>();
  const all: number[] = [];
  const passMs: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const passStart = performance.now();
    for (const resource of examples) {
      const start = performance.now();
      validator.validate(resource);
      const ms = performance.now() - start;
      all.push(ms);
      const list = byType.get(resource.resourceType) ?? [];
      list.push(ms);
      byType.set(resource.resourceType, list);
    }
    passMs.push(performance.now() - passStart);
  }
  const fmt = (ms: number) => (ms * 1000).toFixed(0);
  const rows = [...byType.entries()]
    .map(([type, times]) => {
      const sorted = times.sort((a, b) => a - b);
      return { type, n: sorted.length / options.runs, p50: median(sorted), p99: percentile(sorted, 99) };
    })
    .sort((a, b) => b.p99 - a.p99);
  const lines = ['', 'Validation of the R4 examples (write-path validator, all invariants), µs per resource', ''];
  const width = Math.max(...rows.map((r) => r.type.length), 'resource type'.length);
  lines.push(`${'resource type'.padEnd(width)}  examples  median µs    p99 µs`);
  for (const r of rows) {
    lines.push(
      `${r.type.padEnd(width)}  ${String(r.n).padStart(8)}  ${fmt(r.p50).padStart(9)}  ${fmt(r.p99).padStart(8)}`,
    );
  }
  const sorted = all.sort((a, b) => a - b);
  lines.push('');
  lines.push(
    `all ${examples.length} examples: median ${fmt(median(sorted))} µs, p99 ${fmt(percentile(sorted, 99))} µs; ` +
      `a whole pass ${median(passMs).toFixed(0)} ms (median of ${options.runs})`,
  );
  process.stdout.write(lines.join('\n') + '\n');
}
