import { hl7Runtime } from './runtime.js';

export type { Hl7Encoding, Hl7FieldValues, Hl7AckCode, Hl7AckOptions } from './runtime.js';
export { hl7Runtime } from './runtime.js';

const runtime = hl7Runtime();

export const {
  DEFAULT_ENCODING,
  encodingCharacters,
  readEncoding,
  escapeHl7,
  unescapeHl7,
  Hl7Segment,
  Hl7Message,
  hl7Timestamp,
  buildAck,
} = runtime;
export type Hl7Segment = InstanceType<typeof Hl7Segment>;
export type Hl7Message = InstanceType<typeof Hl7Message>;
