import { HearthClient, MemoryStorage } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { loadPatientLabs, loadRequisition } from './labs-data.js';

function client(answer: (url: URL, body: unknown) => unknown): { client: HearthClient; urls: string[] } {
  const urls: string[] = [];
  const fetch = async (input: string, init?: RequestInit): Promise<Response> => {
    const url = new URL(input);
    urls.push(decodeURIComponent(url.pathname + url.search));
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    return new Response(JSON.stringify(answer(url, body)), { headers: { 'content-type': 'application/fhir+json' } });
  };
  return {
    client: new HearthClient({ baseUrl: 'http://t/', fetch, storage: new MemoryStorage(), cacheTime: 0 }),
    urls,
  };
}

const searchset = (resources: object[]) => ({
  resourceType: 'Bundle',
  type: 'searchset',
  entry: resources.map((resource) => ({ resource })),
});

describe('labs data', () => {
  it("loads a patient's lab orders and reports with each report's results in one batch", async () => {
    const { client: c, urls } = client((_url, body) => {
      const gets = (body as { entry: { request: { url: string } }[] }).entry.map((e) => e.request.url);
      expect(gets[0]).toContain(
        'ServiceRequest?subject=Patient%2Fp1&category=http%3A%2F%2Fsnomed.info%2Fsct%7C108252007',
      );
      expect(gets[1]).toContain('_include=DiagnosticReport:result');
      return {
        resourceType: 'Bundle',
        type: 'batch-response',
        entry: [
          { resource: searchset([{ resourceType: 'ServiceRequest', id: 's1', status: 'active' }]) },
          {
            resource: searchset([
              {
                resourceType: 'DiagnosticReport',
                id: 'r1',
                result: [{ reference: 'Observation/o2' }, { reference: 'Observation/o1' }],
              },
              { resourceType: 'Observation', id: 'o1' },
              { resourceType: 'Observation', id: 'o2' },
            ]),
          },
        ],
      };
    });
    const labs = await loadPatientLabs(c, 'p1');
    expect(urls).toEqual(['/fhir/R4/']);
    expect(labs.orders.map((o) => o.id)).toEqual(['s1']);
    expect(labs.reports.map((r) => r.id)).toEqual(['r1']);
    expect(labs.results.r1.map((o) => o.id)).toEqual(['o2', 'o1']);
  });

  it("loads a requisition's orders by its number, with the patient and the orderer", async () => {
    const order = {
      resourceType: 'ServiceRequest',
      id: 's1',
      requisition: { system: 'https://hearth.dev/fhir/sid/lab-requisition', value: 'L260101-ABCDEF' },
    };
    const { client: c, urls } = client((url) =>
      url.pathname.endsWith('/ServiceRequest/s1')
        ? order
        : searchset([
            order,
            { resourceType: 'ServiceRequest', id: 's2' },
            { resourceType: 'Patient', id: 'p1' },
            { resourceType: 'Practitioner', id: 'dr' },
          ]),
    );
    const requisition = await loadRequisition(c, 's1');
    expect(urls[1]).toContain('requisition=https://hearth.dev/fhir/sid/lab-requisition|L260101-ABCDEF');
    expect(requisition.orders.map((o) => o.id)).toEqual(['s1', 's2']);
    expect(requisition.patient?.id).toBe('p1');
    expect(requisition.requester?.id).toBe('dr');
  });
});
