export { createDicomChannel, dicomContentType } from './channel.js';
