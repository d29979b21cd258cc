/**
 * Progress of a long command on stderr: a bar (cli-progress) on a terminal, plain lines otherwise
 * (logs, CI), or nothing.
 */
import { SingleBar } from 'cli-progress';

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface ProgressState {
  value: number;
  total: number;
  /** Short text after the numbers: chunks, failures, the current file. */
  detail: string;
}

export interface Progress {
  update(state: ProgressState): void;
  /** A message that must not be drawn over by the bar. */
  log(message: string): void;
  stop(): void;
}

export function progressMode(mode: string | undefined): ProgressMode {
  if (mode === undefined || mode === 'auto') {
    return process.stderr.isTTY ? 'bar' : 'lines';
  }
  if (mode === 'bar' || mode === 'lines' || mode === 'none') {
    return mode;
  }
  throw new Error(`Invalid progress mode '${mode}': use auto, bar, lines or none`);
}

/**
 * A progress display. `unit` names what is counted ('resources'); in lines mode a line is written
 * at most every `intervalMs`, and always for the last value.
 */
export function createProgress(mode: ProgressMode, label: string, unit: string, intervalMs = 1000): Progress {
  if (mode === 'none') {
    return { update: () => undefined, log: () => undefined, stop: () => undefined };
  }
  if (mode === 'lines') {
    let last = 0;
    let pending: ProgressState | undefined;
    const write = (s: ProgressState) => {
      const percent = s.total ? Math.floor((s.value / s.total) * 100) : 100;
      process.stderr.write(`${label}: ${s.value}/${s.total} ${unit} (${percent}%)${s.detail ? ` ${s.detail}` : ''}\n`);
      last = Date.now();
      pending = undefined;
    };
    return {
      update(s) {
        if (s.value >= s.total || Date.now() - last >= intervalMs) {
          write(s);
        } else {
          pending = s;
        }
      },
      log: (message) => process.stderr.write(`${message}\n`),
      stop() {
        if (pending) {
          write(pending);
        }
      },
    };
  }
  const bar = new SingleBar({
    format: `${label} {bar} {percentage}% | {value}/{total} ${unit} | {detail}`,
    stream: process.stderr,
    hideCursor: true,
    // Forced: the bar is also drawn when asked for with --progress bar on a non-terminal.
    noTTYOutput: !process.stderr.isTTY,
    notTTYSchedule: intervalMs,
    barsize: 30,
  });
  let started = false;
  return {
    update(s) {
      if (!started) {
        bar.start(s.total, s.value, { detail: s.detail });
        started = true;
      } else {
        bar.setTotal(s.total);
        bar.update(s.value, { detail: s.detail });
      }
    },
    log(message) {
      if (started) {
        // Clear the bar's line, write the message, and let the next update redraw the bar.
        process.stderr.write(process.stderr.isTTY ? `\r\x1b[K${message}\n` : `${message}\n`);
      } else {
        process.stderr.write(`${message}\n`);
      }
    },
    stop() {
      if (started) {
        bar.stop();
      }
    },
  };
}
