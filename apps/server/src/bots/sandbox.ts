import ivm from 'isolated-vm';
import { assertNodeFlags } from '../platform/node-flags.js';
import { sandboxPrelude } from './sandbox-prelude.js';

/** What a bot may ask of the host: client calls and fetch, each with JSON arguments. */
export type HostCall = (method: string, args: unknown[]) => Promise<unknown>;

export interface SandboxRun {
  /** Identifies the bot (isolates are reused only for the same key). */
  poolKey: string;
  /** Identifies the code version (compiled scripts are cached per isolate under it). */
  codeKey: string;
  /** The bot module as CommonJS (see code.ts: toSandboxScript). */
  code: string;
  /** The BotEvent, passed in as JSON. */
  event: unknown;
  host: HostCall;
  timeoutMs: number;
  fhirBase: string;
  baseUrl: string;
}

export interface LogLine {
  level: string;
  message: string;
}

export type SandboxOutcome =
  | { ok: true; value: unknown; logs: LogLine[]; durationMs: number }
  | { ok: false; reason: 'error' | 'timeout' | 'memory'; message: string; logs: LogLine[]; durationMs: number };

export interface SandboxOptions {
  memoryLimitMb: number;
  /** Idle isolates kept for reuse; 0 disposes each isolate after its run. */
  warmIsolates: number;
  /** Most bytes of console output kept per run. */
  maxLogBytes?: number;
  /** Most host calls (client, fetch) in flight per run. */
  maxPendingCalls?: number;
}

interface PooledIsolate {
  isolate: ivm.Isolate;
  /** The prelude and the bot's code, compiled together for one code version. */
  scripts: Map<string, ivm.Script>;
  runs: number;
}

/**
 * Isolates are recycled after this many runs: V8 keeps part of every released context alive in its
 * isolate (about 100 KB each, never collected), so a long-lived isolate grows until its heap limit.
 * A new isolate per 25 runs keeps memory flat and low: with 8 runs at once (`npm run bench`), the
 * server peaked at 379 MB recycling after 100 runs and at 267-271 MB after 25, at the same rate.
 */
const MAX_RUNS_PER_ISOLATE = 25;

/**
 * Runs bot code in V8 isolates (isolated-vm): each run in its own isolate, alone (an isolate is
 * never shared by two runs at once, nor by two bots), in a fresh context, with a heap limit and a
 * wall-clock limit after which the isolate is destroyed wherever its code is. The bot sees no
 * Node.js: no process, require, file system, environment or sockets; only the client and fetch,
 * both served by the host through `host`. Isolated code runs on isolated-vm's own threads, so a
 * hostile bot cannot stall the server's event loop.
 *
 * Idle isolates are kept warm per bot (compiling a context is cheaper than building an isolate);
 * every run still starts in a new context, so nothing a run leaves in its globals is seen by the next.
 */
export class BotSandbox {
  private readonly idle = new Map<string, PooledIsolate[]>();
  private idleCount = 0;
  private readonly options: Required<SandboxOptions>;
  /** Isolates created so far (status, tests). */
  isolatesCreated = 0;

  constructor(options: SandboxOptions) {
    // At construction (server start), not at the first bot run, which would crash the process.
    assertNodeFlags();
    this.options = { maxLogBytes: 64 * 1024, maxPendingCalls: 64, ...options };
  }

  private async acquire(key: string): Promise<PooledIsolate> {
    const list = this.idle.get(key);
    const found = list?.pop();
    if (found) {
      this.idleCount--;
      if (list?.length === 0) {
        this.idle.delete(key);
      }
      return found;
    }
    const isolate = new ivm.Isolate({ memoryLimit: this.options.memoryLimitMb });
    this.isolatesCreated++;
    return { isolate, scripts: new Map(), runs: 0 };
  }

  private release(key: string, pooled: PooledIsolate): void {
    if (pooled.isolate.isDisposed) {
      return;
    }
    if (this.options.warmIsolates <= 0 || pooled.runs >= MAX_RUNS_PER_ISOLATE) {
      pooled.isolate.dispose();
      return;
    }
    while (this.idleCount >= this.options.warmIsolates) {
      // Evict the least recently used key's isolate (Map keeps insertion order).
      const [oldestKey, oldest] = this.idle.entries().next().value as [string, PooledIsolate[]];
      const victim = oldest.shift();
      if (oldest.length === 0) {
        this.idle.delete(oldestKey);
      }
      victim?.isolate.dispose();
      this.idleCount--;
    }
    const list = this.idle.get(key) ?? [];
    this.idle.delete(key);
    list.push(pooled);
    this.idle.set(key, list);
    this.idleCount++;
  }

  async run(run: SandboxRun): Promise<SandboxOutcome> {
    const started = Date.now();
    const logs: LogLine[] = [];
    let logBytes = 0;
    const pooled = await this.acquire(run.poolKey);
    const { isolate } = pooled;
    pooled.runs++;
    let timedOut = false;
    let context: ivm.Context | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      if (!isolate.isDisposed) {
        isolate.dispose();
      }
    }, run.timeoutMs);
    try {
      context = await isolate.createContext();
      const ctx = context;
      const global = context.global;
      await global.set(
        '__hostLog',
        new ivm.Callback(
          (level: unknown, message: unknown) => {
            if (logBytes >= this.options.maxLogBytes) {
              return;
            }
            const text = String(message).slice(0, this.options.maxLogBytes - logBytes);
            logBytes += text.length;
            logs.push({ level: String(level), message: text });
          },
          { ignored: true },
        ),
      );
      // The isolate-side function that settles host calls, fetched on the first call a bot makes.
      let resolver: Promise<ivm.Reference> | undefined;
      const resolve = (): Promise<ivm.Reference> =>
        (resolver ??= ctx.global.get('__hearthResolve', { reference: true }));
      let inFlight = 0;
      await global.set(
        '__hostSend',
        new ivm.Callback(
          (id: unknown, method: unknown, argsJson: unknown) => {
            if (typeof id !== 'number' || typeof method !== 'string' || typeof argsJson !== 'string') {
              return;
            }
            void this.answer(isolate, resolve, id, async () => {
              if (inFlight >= this.options.maxPendingCalls) {
                throw new Error(`A bot may have at most ${this.options.maxPendingCalls} requests in flight`);
              }
              inFlight++;
              try {
                const args = JSON.parse(argsJson) as unknown[];
                return await run.host(method, Array.isArray(args) ? args : []);
              } finally {
                inFlight--;
              }
            });
          },
          { ignored: true },
        ),
      );
      let script = pooled.scripts.get(run.codeKey);
      if (!script) {
        script = await isolate.compileScript(`${sandboxPrelude(run.fhirBase, run.baseUrl)}\n${run.code}`, {
          filename: 'bot.js',
        });
        pooled.scripts.clear();
        pooled.scripts.set(run.codeKey, script);
      }
      await script.run(context);
      const output = (await context.evalClosure('return __hearthMain($0)', [JSON.stringify(run.event ?? null)], {
        result: { promise: true, copy: true },
      })) as unknown;
      const value =
        typeof output === 'string' && output !== '' ? (JSON.parse(output) as { value: unknown }).value : undefined;
      return { ok: true, value, logs, durationMs: Date.now() - started };
    } catch (err) {
      const durationMs = Date.now() - started;
      if (timedOut) {
        return { ok: false, reason: 'timeout', message: `Bot timed out after ${run.timeoutMs} ms`, logs, durationMs };
      }
      if (isolate.isDisposed) {
        return {
          ok: false,
          reason: 'memory',
          message: `Bot exceeded its memory limit of ${this.options.memoryLimitMb} MB`,
          logs,
          durationMs,
        };
      }
      return { ok: false, reason: 'error', message: errorText(err), logs, durationMs };
    } finally {
      clearTimeout(timer);
      if (context && !isolate.isDisposed) {
        context.release();
      }
      this.release(run.poolKey, pooled);
    }
  }

  /** Runs a host call and hands its result (or error) back to the isolate's pending promise. */
  private async answer(
    isolate: ivm.Isolate,
    resolver: () => Promise<ivm.Reference>,
    id: number,
    work: () => Promise<unknown>,
  ): Promise<void> {
    let ok = true;
    let json: string;
    try {
      const value = await work();
      json = value === undefined ? '' : JSON.stringify(value);
    } catch (err) {
      ok = false;
      const outcome = (err as { outcome?: unknown }).outcome;
      json = JSON.stringify({ message: errorText(err), ...(outcome ? { outcome } : {}) });
    }
    if (isolate.isDisposed) {
      return;
    }
    try {
      // The bot's continuation runs inside this call; the run's wall-clock limit bounds it.
      await (await resolver()).apply(undefined, [id, ok, json]);
    } catch {
      // The run ended (timeout, memory, context released) before the answer arrived.
    }
  }

  /** Disposes every idle isolate (server shutdown). */
  dispose(): void {
    for (const list of this.idle.values()) {
      for (const p of list) {
        if (!p.isolate.isDisposed) {
          p.isolate.dispose();
        }
      }
    }
    this.idle.clear();
    this.idleCount = 0;
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  return String(err);
}
