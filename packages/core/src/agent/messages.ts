// The messages an on-premises agent and the server exchange over the `/ws/agent` websocket, one
// JSON object per frame. The shape follows the platform's SDK contract: one discriminated union
// over `type`, the fields named as there (body, callback, accessToken, agentId, channel,
// contentType, remote, statusCode, version).

/** The agent opens the session with the access token of its ClientApplication. */
export interface AgentConnectRequest {
  type: 'agent:connect:request';
  accessToken: string;
  agentId: string;
  /** The agent's software version, shown by `$status`. */
  version?: string;
  callback?: string;
}

export interface AgentConnectResponse {
  type: 'agent:connect:response';
  callback?: string;
}

export interface AgentHeartbeatRequest {
  type: 'agent:heartbeat:request';
  callback?: string;
}

export interface AgentHeartbeatResponse {
  type: 'agent:heartbeat:response';
  version: string;
  callback?: string;
}

/**
 * A message crossing a channel: from the agent to the server (an inbound message for the
 * channel's bot), or from the server to the agent (a `$push` out to a destination).
 */
export interface AgentTransmitRequest {
  type: 'agent:transmit:request';
  /** The channel's name in the Agent resource. */
  channel?: string;
  /** The peer: where it came from (inbound), or where it goes (`$push`), `host:port`. */
  remote: string;
  contentType: string;
  body: string;
  /** Correlates the response with its request. */
  callback?: string;
}

export interface AgentTransmitResponse {
  type: 'agent:transmit:response';
  channel?: string;
  remote: string;
  contentType: string;
  body: string;
  /** 200 when delivered; 4xx/5xx with an OperationOutcome as JSON body when not. */
  statusCode?: number;
  callback?: string;
}

export interface AgentReloadConfigRequest {
  type: 'agent:reloadconfig:request';
  callback?: string;
}

export interface AgentReloadConfigResponse {
  type: 'agent:reloadconfig:response';
  statusCode?: number;
  callback?: string;
}

/** Either side reports a failure; `body` says what went wrong. */
export interface AgentError {
  type: 'agent:error';
  body: string;
  callback?: string;
}

export type AgentRequestMessage =
  AgentConnectRequest | AgentHeartbeatRequest | AgentTransmitRequest | AgentReloadConfigRequest;

export type AgentResponseMessage =
  AgentConnectResponse | AgentHeartbeatResponse | AgentTransmitResponse | AgentReloadConfigResponse | AgentError;

export type AgentMessage = AgentRequestMessage | AgentResponseMessage;

export type AgentMessageType = AgentMessage['type'];

/** The content type of HL7 v2 in its pipe-delimited encoding (ER7). */
export const HL7_V2_CONTENT_TYPE = 'x-application/hl7-v2+er7';

const TYPES: ReadonlySet<string> = new Set<AgentMessageType>([
  'agent:connect:request',
  'agent:connect:response',
  'agent:heartbeat:request',
  'agent:heartbeat:response',
  'agent:transmit:request',
  'agent:transmit:response',
  'agent:reloadconfig:request',
  'agent:reloadconfig:response',
  'agent:error',
]);

/** The string fields each type requires; a frame missing one is refused. */
const REQUIRED: Partial<Record<AgentMessageType, readonly string[]>> = {
  'agent:connect:request': ['accessToken', 'agentId'],
  'agent:heartbeat:response': ['version'],
  'agent:transmit:request': ['remote', 'contentType', 'body'],
  'agent:transmit:response': ['remote', 'contentType', 'body'],
  'agent:error': ['body'],
};

const STRING_FIELDS = ['body', 'callback', 'accessToken', 'agentId', 'channel', 'contentType', 'remote', 'version'];

/**
 * Reads one websocket frame as an AgentMessage. Throws an Error saying what is wrong (not JSON,
 * an unknown type, a missing or mistyped field), so the receiver can answer with `agent:error`.
 */
export function parseAgentMessage(text: string): AgentMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('Agent message is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('Agent message must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  if (typeof record.type !== 'string' || !TYPES.has(record.type)) {
    throw new Error(`Unknown agent message type ${JSON.stringify(record.type)}`);
  }
  for (const field of STRING_FIELDS) {
    if (record[field] !== undefined && typeof record[field] !== 'string') {
      throw new Error(`Agent message field '${field}' must be a string`);
    }
  }
  if (record.statusCode !== undefined && !Number.isInteger(record.statusCode)) {
    throw new Error("Agent message field 'statusCode' must be an integer");
  }
  for (const field of REQUIRED[record.type as AgentMessageType] ?? []) {
    if (typeof record[field] !== 'string') {
      throw new Error(`Agent message '${record.type}' needs '${field}'`);
    }
  }
  return record as unknown as AgentMessage;
}
