// The agent's settings: command-line arguments or a JSON config file (--config), with the client
// secret also from HEARTH_AGENT_CLIENT_SECRET so it need not appear in a process list.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AgentConfig {
  baseUrl: string;
  agentId: string;
  clientId: string;
  clientSecret: string;
  /** Where the on-disk queue lives (a SQLite file). */
  dataDir: string;
  heartbeatMs: number;
}

export const USAGE = `Usage:
  hearth-agent <baseUrl> <agentId> <clientId> <clientSecret> [--data-dir DIR]
  hearth-agent --config agent.json

agent.json: { "baseUrl", "agentId", "clientId", "clientSecret", "dataDir"?, "heartbeatMs"? }
The secret may also come from HEARTH_AGENT_CLIENT_SECRET.`;

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('--')) {
      const value = argv[i + 1];
      if (value === undefined) {
        throw new Error(`${arg} needs a value\n\n${USAGE}`);
      }
      flags.set(arg.slice(2), value);
      i++;
    } else {
      positional.push(arg);
    }
  }
  const file = flags.get('config');
  const fromFile = file ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<AgentConfig>) : {};
  const [baseUrl, agentId, clientId, clientSecret] = positional;
  const merged = {
    baseUrl: baseUrl ?? fromFile.baseUrl,
    agentId: agentId ?? fromFile.agentId,
    clientId: clientId ?? fromFile.clientId,
    clientSecret: clientSecret ?? fromFile.clientSecret ?? env.HEARTH_AGENT_CLIENT_SECRET,
    dataDir: flags.get('data-dir') ?? fromFile.dataDir ?? join(process.cwd(), 'hearth-agent-data'),
    heartbeatMs: Number(flags.get('heartbeat-ms') ?? fromFile.heartbeatMs ?? 10_000),
  };
  for (const key of ['baseUrl', 'agentId', 'clientId', 'clientSecret'] as const) {
    if (!merged[key]) {
      throw new Error(`Missing ${key}\n\n${USAGE}`);
    }
  }
  const base = new URL(merged.baseUrl as string);
  if (!base.pathname.endsWith('/')) {
    base.pathname += '/';
  }
  if (!Number.isFinite(merged.heartbeatMs) || merged.heartbeatMs < 100) {
    throw new Error('heartbeatMs must be a number of milliseconds, at least 100');
  }
  return { ...(merged as AgentConfig), baseUrl: base.href };
}
