import { describe, expect, it } from 'vitest';
import { evaluateParameters } from './parameters.js';

const get = (query: string) =>
  evaluateParameters({ method: 'GET', query: new URLSearchParams(query), body: undefined });

function outcomeOf(fn: () => unknown): { text?: string; expression?: string[] } {
  try {
    fn();
  } catch (err) {
    const issue = (err as { outcome: { issue: { details?: { text?: string }; expression?: string[] }[] } }).outcome
      .issue[0];
    return { text: issue.details?.text, expression: issue.expression };
  }
  throw new Error('expected a failure');
}

describe('$evaluate-measure parameters', () => {
  it('reads a period of dates as whole days, and defaults the report type from the subject', () => {
    const p = get('periodStart=2019-01-01&periodEnd=2019-12-31&subject=Patient/p1');
    expect(p.period).toMatchObject({
      start: '2019-01-01',
      end: '2019-12-31',
      cqlStart: '2019-01-01T00:00:00.000',
      cqlEnd: '2019-12-31T23:59:59.999',
      low: Date.UTC(2019, 0, 1),
      high: Date.UTC(2020, 0, 1),
    });
    expect(p.reportType).toBe('individual');
    expect(p.subject).toEqual({ resourceType: 'Patient', id: 'p1' });
    expect(get('periodStart=2019&periodEnd=2019').period.cqlEnd).toBe('2019-12-31T23:59:59.999');
    expect(get('periodStart=2019-01-01&periodEnd=2019-12-31').reportType).toBe('summary');
    expect(get('periodStart=2019-01-01&periodEnd=2019-12-31&subject=Group/g').reportType).toBe('summary');
    expect(get('periodStart=2019-01-01&periodEnd=2019-12-31&reportType=subject-list').reportType).toBe('subject-list');
    expect(get('periodStart=2019-01-01T00:00:00-07:00&periodEnd=2019-12-31T00:00:00-07:00').period.cqlStart).toBe(
      '2019-01-01T07:00:00.000Z',
    );
  });

  it('takes a POST Parameters body with references and booleans', () => {
    const p = evaluateParameters({
      method: 'POST',
      query: new URLSearchParams(),
      body: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'periodStart', valueDate: '2020-01-01' },
          { name: 'periodEnd', valueDate: '2020-06-30' },
          { name: 'subject', valueReference: { reference: 'Patient/x' } },
          { name: 'measure', valueCanonical: 'http://example.org/Measure/m|2' },
          { name: 'persist', valueBoolean: true },
        ],
      },
    });
    expect(p).toMatchObject({ measure: 'http://example.org/Measure/m|2', persist: true, reportType: 'individual' });
  });

  it('answers 400 naming the parameter for each mistake', () => {
    expect(outcomeOf(() => get('periodEnd=2019-12-31'))).toEqual({
      text: 'Measure/$evaluate-measure needs periodStart (a date such as 2019-01-01)',
      expression: ['periodStart'],
    });
    expect(outcomeOf(() => get('periodStart=2019-01-01')).expression).toEqual(['periodEnd']);
    expect(outcomeOf(() => get('periodStart=2019-13-01&periodEnd=2019-12-31')).expression).toEqual(['periodStart']);
    expect(outcomeOf(() => get('periodStart=2020-01-01&periodEnd=2019-12-31')).text).toBe(
      'periodStart must not be after periodEnd',
    );
    expect(outcomeOf(() => get('periodStart=2019&periodEnd=2019&subject=Practitioner/x')).expression).toEqual([
      'subject',
    ]);
    expect(outcomeOf(() => get('periodStart=2019&periodEnd=2019&reportType=everything')).expression).toEqual([
      'reportType',
    ]);
    expect(outcomeOf(() => get('periodStart=2019&periodEnd=2019&reportType=subject')).expression).toEqual([
      'reportType',
    ]);
    expect(outcomeOf(() => get('periodStart=2019&periodEnd=2019&persist=yes')).expression).toEqual(['persist']);
    expect(outcomeOf(() => get('periodStart=2019&periodEnd=2019&practitioner=Practitioner/1')).expression).toEqual([
      'practitioner',
    ]);
    expect(
      outcomeOf(() =>
        evaluateParameters({ method: 'POST', query: new URLSearchParams(), body: { resourceType: 'Patient' } }),
      ).text,
    ).toBe('Measure/$evaluate-measure takes a Parameters resource in a POST body');
  });
});
