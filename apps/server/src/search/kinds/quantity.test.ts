import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { m0120SearchQuantityBaseUnits } from '../../storage/migrations/0120-search-quantity-base-units.js';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createAll, ids, search } from '../test/helpers.js';

const UCUM = 'http://unitsofmeasure.org';
let t: TestApp;
const byName = new Map<string, string>();

const observation = (name: string, valueQuantity: Record<string, unknown>) => ({
  resourceType: 'Observation',
  status: 'final',
  code: { text: name },
  valueQuantity,
});

async function find(query: string): Promise<string[]> {
  const names = new Map([...byName].map(([name, id]) => [id, name]));
  return ids(await search(t, `Observation?${query}`))
    .map((id) => names.get(id) ?? id)
    .sort();
}

beforeAll(async () => {
  t = await createTestApp();
  const list: [string, Record<string, unknown>][] = [
    ['weight-2lb', { value: 2, unit: 'lb', system: UCUM, code: '[lb_av]' }],
    ['weight-1kg', { value: 1, unit: 'kg', system: UCUM, code: 'kg' }],
    ['duration-90min', { value: 90, unit: 'min', system: UCUM, code: 'min' }],
    ['duration-2h', { value: 2, unit: 'h', system: UCUM, code: 'h' }],
    ['temp-37C', { value: 37, unit: '°C', system: UCUM, code: 'Cel' }],
    ['temp-100F', { value: 100, unit: '°F', system: UCUM, code: '[degF]' }],
    ['glucose-100mgdl', { value: 100, unit: 'mg/dL', system: UCUM, code: 'mg/dL' }],
    ['dose-5iu', { value: 5, unit: 'IU', system: UCUM, code: '[IU]' }],
    ['dose-5miu', { value: 5, unit: 'mIU', system: UCUM, code: 'm[IU]' }],
    ['other-system', { value: 2, system: 'http://example.org/units', code: '[lb_av]' }],
  ];
  const created = await createAll(
    t,
    list.map(([name, q]) => observation(name, q)),
  );
  created.forEach((c, i) => byName.set(list[i][0], c.id));
});
afterAll(async () => {
  await t?.close();
});

describe('quantity search across UCUM units', () => {
  it('compares mass in pounds and kilograms', async () => {
    expect(await find(`value-quantity=0.90718474|${UCUM}|kg`)).toEqual(['weight-2lb']);
    expect(await find(`value-quantity=907|${UCUM}|g`)).toEqual(['weight-2lb']);
    expect(await find(`value-quantity=gt2|${UCUM}|[lb_av]`)).toEqual(['weight-1kg']);
    expect(await find(`value-quantity=2.2|${UCUM}|[lb_av]`)).toEqual(['weight-1kg']);
    expect(await find(`value-quantity=1000000|${UCUM}|mg`)).toEqual(['weight-1kg']);
  });

  it('compares durations in minutes and hours', async () => {
    expect(await find(`value-quantity=1.5|${UCUM}|h`)).toEqual(['duration-90min']);
    expect(await find(`value-quantity=120|${UCUM}|min`)).toEqual(['duration-2h']);
    expect(await find(`value-quantity=ge1.5|${UCUM}|h`)).toEqual(['duration-2h', 'duration-90min']);
    expect(await find(`value-quantity=lt100|${UCUM}|min`)).toEqual(['duration-90min']);
  });

  it('compares temperatures on their interval scales (Cel, [degF], K)', async () => {
    expect(await find(`value-quantity=310.15|${UCUM}|K`)).toEqual(['temp-37C']);
    expect(await find(`value-quantity=98.6|${UCUM}|[degF]`)).toEqual(['temp-37C']);
    expect(await find(`value-quantity=gt37.5|${UCUM}|Cel`)).toEqual(['temp-100F']);
    expect(await find(`value-quantity=lt300|${UCUM}|K`)).toEqual([]);
  });

  it('keeps the precision of the search value through the conversion', async () => {
    // 100 mg/dL is 1 g/L: '1' means [0.5, 1.5) g/L, '1.00' means [0.995, 1.005).
    expect(await find(`value-quantity=1|${UCUM}|g/L`)).toEqual(['glucose-100mgdl']);
    expect(await find(`value-quantity=1.00|${UCUM}|g/L`)).toEqual(['glucose-100mgdl']);
    expect(await find(`value-quantity=1.01|${UCUM}|g/L`)).toEqual([]);
    // '1' kg is [0.5, 1.5) kg: it takes 2 lb (0.907 kg) as well as 1 kg.
    expect(await find(`value-quantity=1|${UCUM}|kg`)).toEqual(['weight-1kg', 'weight-2lb']);
  });

  it('folds prefixes of units without base units, and leaves other systems as written', async () => {
    expect(await find(`value-quantity=0.005|${UCUM}|[IU]`)).toEqual(['dose-5miu']);
    expect(await find(`value-quantity=5|${UCUM}|[IU]`)).toEqual(['dose-5iu']);
    expect(await find('value-quantity=2|http://example.org/units|[lb_av]')).toEqual(['other-system']);
  });

  it('sorts by the value in base units', async () => {
    const bundle = await search(t, `Observation?code:text=weight&_sort=value-quantity`);
    expect(ids(bundle)).toEqual([byName.get('weight-2lb'), byName.get('weight-1kg')]);
  });

  it('migration 120 recomputes rows indexed in the former, prefix-folded form', async () => {
    const id = byName.get('weight-2lb')!;
    await t.pool.query(`UPDATE search_quantity SET nunit = '[lb_av]', nlow = 2, nhigh = 2 WHERE resource_id = $1`, [
      id,
    ]);
    expect(await find(`value-quantity=907|${UCUM}|g`)).toEqual([]);
    const client = await t.pool.connect();
    try {
      await m0120SearchQuantityBaseUnits.up(client);
    } finally {
      client.release();
    }
    expect(await find(`value-quantity=907|${UCUM}|g`)).toEqual(['weight-2lb']);
    expect(await find(`value-quantity=90|${UCUM}|min`)).toEqual(['duration-90min']);
  });
});
