// hearth-agent: runs until SIGTERM/SIGINT, then stops its channels and closes its queue.
import { HearthAgent } from './agent.js';
import { parseArgs } from './config.js';
import type { ChannelLogger } from './channels/types.js';

/** One JSON line per event on stdout (journald and container logs keep them as they are). */
const log: ChannelLogger = {
  info: (message, fields) => write('info', message, fields),
  warn: (message, fields) => write('warn', message, fields),
  error: (message, fields) => write('error', message, fields),
};

function write(level: string, message: string, fields?: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

async function main(): Promise<void> {
  let config;
  try {
    config = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const agent = new HearthAgent(config, log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    log.info('stopping', { signal });
    await agent.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await agent.start();
  log.info('started', { channels: [...agent.runningChannels().keys()] });
}

void main();
