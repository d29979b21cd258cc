import { astmRuntime } from './records.js';

export type {
  AstmDelimiters,
  AstmMessage,
  AstmOrder,
  AstmPatient,
  AstmRecord,
  AstmResult,
  AstmTransmission,
} from './records.js';
export { astmRuntime } from './records.js';

export const {
  astmDelimitersOf,
  astmValue,
  defaultAstmDelimiters,
  escapeAstm,
  formatAstmRecord,
  formatAstmTransmission,
  parseAstmRecord,
  parseAstmTransmission,
  unescapeAstm,
} = astmRuntime();
