import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from './heap.js';

describe('limitHeapGrowth', () => {
  it('caps the heap growing factor when the operator chose none', () => {
    expect(limitHeapGrowth(['--enable-source-maps'], '--max-http-header-size=16384')).toBe(true);
  });

  it('keeps a factor chosen on the node command line', () => {
    expect(limitHeapGrowth(['--heap-growing-percent=200'], '')).toBe(false);
    expect(limitHeapGrowth(['--heap_growing_percent=20'], '')).toBe(false);
  });

  it('keeps a factor chosen in NODE_OPTIONS', () => {
    expect(limitHeapGrowth([], '--enable-source-maps --heap-growing-percent=80')).toBe(false);
  });
});
