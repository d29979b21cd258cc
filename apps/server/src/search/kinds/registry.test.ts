import { describe, expect, it } from 'vitest';
import { readR4File } from '@hearth/definitions';
import platformBundle from '../platform-search-parameters.json' with { type: 'json' };
import { TABLES } from '../index/rows.js';
import type { SearchParameterResource } from '../registry/params.js';
import { kindOf, SEARCH_KINDS } from './registry.js';

type Bundle = { entry: { resource: SearchParameterResource }[] };

const definitions = [
  ...readR4File<Bundle>('search-parameters.json').entry,
  ...(platformBundle as unknown as Bundle).entry,
].map((e) => e.resource);

describe('search parameter kinds', () => {
  it('has a kind for every type the R4 and platform SearchParameters use', () => {
    const types = new Set(definitions.map((sp) => sp.type));
    expect(types.size).toBeGreaterThanOrEqual(9);
    for (const type of types) {
      expect(kindOf(type), type).toBeDefined();
      expect(kindOf(type)?.type).toBe(type);
    }
  });

  it('registers each kind under its own type', () => {
    for (const [type, kind] of Object.entries(SEARCH_KINDS)) {
      expect(kind.type).toBe(type);
    }
  });

  it('gives every kind either its own rows (a table and a match) or a condition of its own', () => {
    for (const kind of Object.values(SEARCH_KINDS)) {
      if (kind.table) {
        expect(TABLES[kind.table], kind.type).toBeDefined();
        expect(kind.match, kind.type).toBeTypeOf('function');
        expect(kind.sort, kind.type).toBeDefined();
      } else {
        expect(kind.condition, kind.type).toBeTypeOf('function');
        expect(kind.missing, kind.type).toBeTypeOf('function');
      }
    }
  });

  it('reads prefixes for number, date and quantity only (hl7.org/fhir/R4/search.html#prefix)', () => {
    const prefixed = Object.values(SEARCH_KINDS)
      .filter((k) => k.prefixed)
      .map((k) => k.type);
    expect(prefixed.sort()).toEqual(['date', 'number', 'quantity']);
  });

  it('has no kind for a type a malformed SearchParameter may carry', () => {
    expect(kindOf('toString' as never)).toBeUndefined();
    expect(kindOf('geo' as never)).toBeUndefined();
  });
});
