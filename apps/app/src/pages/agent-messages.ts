// What the Agent page reads from the agent operations: $status and $messages answers (Parameters)
// as plain values, messages grouped by channel, and a message's text made readable.
import type { Parameters, ParametersParameter } from '@hearth/core';

export interface AgentStatus {
  status: 'connected' | 'disconnected';
  version?: string;
  lastUpdated?: string;
}

export interface AgentLogEntry {
  /** The log entry's id, stable while it is kept. */
  id: string;
  channel: string;
  direction: 'in' | 'out';
  time: string;
  remote: string;
  contentType: string;
  body: string;
  response?: string;
  statusCode: number;
}

function valueOf(p: ParametersParameter): string | number | undefined {
  return p.valueString ?? p.valueCode ?? p.valueInstant ?? p.valueInteger;
}

/** Agent/{id}/$status's answer: connected or not, the version it reported, its last heartbeat. */
export function readStatus(parameters: Parameters | undefined): AgentStatus {
  const find = (name: string) => parameters?.parameter?.find((p) => p.name === name);
  const version = find('version')?.valueString;
  const lastUpdated = find('lastUpdated')?.valueInstant;
  return {
    status: find('status')?.valueCode === 'connected' ? 'connected' : 'disconnected',
    ...(version ? { version } : {}),
    ...(lastUpdated ? { lastUpdated } : {}),
  };
}

/** Agent/{id}/$messages's answer: one entry per `message` parameter, in the order given (newest first). */
export function readMessages(parameters: Parameters | undefined): AgentLogEntry[] {
  return (parameters?.parameter ?? [])
    .filter((p) => p.name === 'message')
    .map((p) => {
      const parts = Object.fromEntries((p.part ?? []).map((part) => [part.name, valueOf(part)]));
      const response = parts.response;
      return {
        id: String(parts.id ?? ''),
        channel: String(parts.channel ?? ''),
        direction: parts.direction === 'out' ? 'out' : 'in',
        time: String(parts.time ?? ''),
        remote: String(parts.remote ?? ''),
        contentType: String(parts.contentType ?? ''),
        body: String(parts.body ?? ''),
        ...(response !== undefined ? { response: String(response) } : {}),
        statusCode: typeof parts.statusCode === 'number' ? parts.statusCode : 0,
      };
    });
}

/**
 * Messages by channel: the Agent's channels in their order (each, even without messages), then any
 * other channel the log names (a channel since removed; '' for messages no channel took).
 */
export function byChannel(channels: string[], messages: AgentLogEntry[]): [string, AgentLogEntry[]][] {
  const groups = new Map<string, AgentLogEntry[]>(channels.map((name) => [name, []]));
  for (const message of messages) {
    const list = groups.get(message.channel) ?? [];
    list.push(message);
    groups.set(message.channel, list);
  }
  return [...groups];
}

/** HL7 v2 separates segments with carriage returns: shown one a line. */
export function readableText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
}

/** The first line of a message, for its row in the table. */
export function firstLine(text: string, max = 80): string {
  const line = readableText(text).split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What a status code says: answered, refused or failed, or not answered. */
export function outcomeOf(statusCode: number): { label: string; color: string } {
  if (statusCode === 0) return { label: 'no answer', color: 'gray' };
  if (statusCode < 300) return { label: `${statusCode} ok`, color: 'green' };
  return { label: `${statusCode} failed`, color: 'red' };
}
