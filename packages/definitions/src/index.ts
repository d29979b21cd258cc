export * from './files.js';
export * from './resource-types.js';
