// Appointment/$find: free Slots for a practitioner, location, service or service type in a date
// range, as a search on Slot (so the caller's access rules apply exactly as they do to search),
// paged by the search's keyset cursor.
import { badRequest, fail, type Bundle } from '@hearth/core';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { SearchService } from '../search/service.js';
import { patientFor } from './caller.js';
import { APPOINTMENT_FIND } from './definitions.js';
import { instantParam, readParameters, referenceParam, type OperationParameters } from './parameters.js';

const SUPPORTED = [
  'start',
  'end',
  'practitioner',
  'location',
  'healthcare-service',
  'service-type',
  'schedule',
  'patient',
  '_count',
  '_cursor',
];

/** The Slot search that answers $find; `now` keeps past slots out. */
export function findSearchParams(params: OperationParameters, now: number): URLSearchParams {
  const start = instantParam(params, 'start');
  const end = instantParam(params, 'end', true);
  if (start === undefined) fail(badRequest('Appointment/$find needs a start (date or dateTime)', 'start'));
  if (end === undefined) fail(badRequest('Appointment/$find needs an end (date or dateTime)', 'end'));
  if (end <= start) fail(badRequest('end must be after start', 'end'));
  const search = new URLSearchParams({ status: 'free' });
  search.append('start', `ge${new Date(Math.max(start, now)).toISOString()}`);
  search.append('start', `lt${new Date(end).toISOString()}`);
  search.set('schedule.active', 'true');
  const actors: [string, string[]][] = [
    ['practitioner', ['Practitioner', 'PractitionerRole']],
    ['location', ['Location']],
    ['healthcare-service', ['HealthcareService']],
  ];
  for (const [name, types] of actors) {
    const ref = referenceParam(params, name, types);
    // Each is an actor of the slot's schedule; given together, the schedule has them all.
    if (ref) search.append('schedule.actor', ref.join('/'));
  }
  const schedule = referenceParam(params, 'schedule', ['Schedule']);
  if (schedule) search.set('schedule', schedule.join('/'));
  const serviceTypes = params.all('service-type');
  if (serviceTypes.length > 0) search.set('service-type', serviceTypes.join(','));
  const count = params.get('_count');
  if (count !== undefined) {
    if (!/^\d+$/.test(count) || Number(count) > 1000) {
      fail(badRequest('_count must be a whole number from 0 to 1000', '_count'));
    }
    search.set('_count', count);
  }
  const cursor = params.get('_cursor');
  if (cursor) search.set('_cursor', cursor);
  search.set('_sort', 'start');
  search.set('_include', 'Slot:schedule');
  return search;
}

/** The search's next link, as a link to $find with the caller's own parameters and the cursor. */
function findLinks(bundle: Bundle, base: string, given: URLSearchParams): Bundle['link'] {
  const own = new URLSearchParams(given);
  own.delete('_cursor');
  const url = (p: URLSearchParams) => `${base}?${p.toString()}`;
  const links: NonNullable<Bundle['link']> = [{ relation: 'self', url: url(given) }];
  const next = bundle.link?.find((l) => l.relation === 'next');
  const cursor = next ? new URL(next.url).searchParams.get('_cursor') : null;
  if (cursor) {
    own.set('_cursor', cursor);
    links.push({ relation: 'next', url: url(own) });
  }
  return links;
}

export function findOperation(search: SearchService): OperationRegistration {
  return {
    definition: APPOINTMENT_FIND,
    handler: async (input) => {
      const params = readParameters(input, 'Appointment/$find', SUPPORTED);
      const { repo, fhirBase } = input.context;
      const patient = referenceParam(params, 'patient', ['Patient']);
      patientFor(repo, patient?.join('/'), 'Appointment/$find');
      const query = findSearchParams(params, Date.now());
      const bundle = JSON.parse(
        await search.search(repo, { resourceType: 'Slot', params: query, fhirBase, strict: true }),
      ) as Bundle;
      // The parameters as given, for the links (a POST body's too).
      const given = new URLSearchParams();
      for (const name of SUPPORTED) for (const v of params.all(name)) given.append(name, v);
      bundle.link = findLinks(bundle, `${fhirBase}Appointment/$find`, given);
      return jsonResult(bundle);
    },
  };
}
