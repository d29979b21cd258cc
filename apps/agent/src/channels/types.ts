// The contract between the agent's core (websocket to the server, queue) and each protocol's
// channel (MLLP, ASTM, DICOM). A channel owns its sockets; the core owns delivery to the server.

/** One message as it crosses a channel: text as is, binary content (DICOM) base64-encoded. */
export interface ChannelMessage {
  /** e.g. `x-application/hl7-v2+er7`, `x-application/astm`, `application/dicom`. */
  contentType: string;
  body: string;
  /** The peer's address, `host:port`. */
  remote: string;
}

/**
 * Hands an inbound message to the server (the channel's bot) and resolves with the bot's answer,
 * if any. Rejects when the message could not be delivered or accepted.
 */
export type DeliverFn = (message: ChannelMessage) => Promise<ChannelMessage | undefined>;

export interface ChannelLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ChannelContext {
  /** The channel's name in the Agent resource. */
  name: string;
  /** The Endpoint's address, e.g. `mllp://0.0.0.0:2575`, `dicom://0.0.0.0:11112`. */
  address: URL;
  /** Channel settings from the Endpoint/Agent (e.g. `aeTitle`, acknowledgement mode). */
  settings: Record<string, string>;
  deliver: DeliverFn;
  log: ChannelLogger;
}

export interface Channel {
  /** Starts listening; resolves once the socket is bound. */
  start(): Promise<void>;
  /** Stops accepting, closes open connections; resolves when closed. */
  stop(): Promise<void>;
  /**
   * Sends a message out to a destination address (`host:port`, or for DICOM `AE@host:port`) and
   * resolves with the remote's answer (undefined when the protocol has none).
   */
  push(destination: string, message: ChannelMessage, timeoutMs: number): Promise<ChannelMessage | undefined>;
}

export type ChannelFactory = (context: ChannelContext) => Channel;
