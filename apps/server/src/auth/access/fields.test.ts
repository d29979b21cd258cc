import { describe, expect, it } from 'vitest';
import { parseKeepingDecimals, stringifyKeepingDecimals } from '../../storage/decimal-json.js';
import { keepFields } from './fields.js';

describe('keepFields', () => {
  it('restores the protected field from the previous version and keeps the written decimals as written', () => {
    const written = parseKeepingDecimals(
      '{"resourceType":"Observation","status":"final","valueQuantity":{"value":1.0},"issued":"2024-01-01T00:00:00Z"}',
    ) as Record<string, unknown>;
    const previous = { resourceType: 'Observation', status: 'final', issued: '2020-01-01T00:00:00Z' };
    const kept = keepFields(written, previous, ['issued'], 'Observation');
    expect(kept).not.toBe(written);
    expect(stringifyKeepingDecimals(kept)).toBe(
      '{"resourceType":"Observation","status":"final","valueQuantity":{"value":1.0},"issued":"2020-01-01T00:00:00Z"}',
    );
    expect(written.issued).toBe('2024-01-01T00:00:00Z');
  });
});
