export { createAstmChannel, astmContentType } from './channel.js';
