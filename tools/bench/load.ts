/** A closed-loop load runner: `concurrency` workers each issue one operation after another. */
export interface LoadResult {
  name: string;
  count: number;
  errors: number;
  seconds: number;
  /** Operations per second (or units per second when an operation counts several units). */
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  firstError?: string;
}

export type Operation = (worker: number, i: number) => Promise<number | void>;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) {
    return NaN;
  }
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs op for `seconds` at `concurrency`, after `warmupSeconds` of unmeasured load.
 * An operation may return how many units it did (resources in a transaction); the rate counts units.
 */
export async function runLoad(
  name: string,
  op: Operation,
  options: { concurrency: number; seconds: number; warmupSeconds?: number; maxOps?: number },
): Promise<LoadResult> {
  const warmup = options.warmupSeconds ?? 1;
  if (warmup > 0) {
    await drive(op, options.concurrency, warmup * 1000, Infinity);
  }
  return drive(op, options.concurrency, options.seconds * 1000, options.maxOps ?? Infinity, name);
}

async function drive(
  op: Operation,
  concurrency: number,
  ms: number,
  maxOps: number,
  name = 'warmup',
): Promise<LoadResult> {
  const latencies: number[] = [];
  let units = 0;
  let errors = 0;
  let firstError: string | undefined;
  let started = 0;
  const deadline = performance.now() + ms;
  const t0 = performance.now();
  const worker = async (w: number): Promise<void> => {
    while (performance.now() < deadline && started < maxOps) {
      const i = started++;
      const t = performance.now();
      try {
        const n = await op(w, i);
        latencies.push(performance.now() - t);
        units += typeof n === 'number' ? n : 1;
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    count: latencies.length,
    errors,
    seconds,
    rate: units / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    firstError,
  };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) {
    return NaN;
  }
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
