export * from './availability.js';
export * from './plan.js';
export * from './zoned-time.js';
