import { describe, expect, it } from 'vitest';
import { describeFhirUrl } from './interaction.js';

describe('describeFhirUrl', () => {
  it.each([
    ['GET', '/fhir/R4/metadata', { interaction: 'capabilities' }],
    ['GET', '/fhir/R4', { interaction: 'search-system' }],
    ['GET', '/fhir/R4/?_type=Patient', { interaction: 'search-system' }],
    ['POST', '/fhir/R4/_search', { interaction: 'search-system' }],
    ['GET', '/fhir/R4/_history', { interaction: 'history-system' }],
    ['POST', '/fhir/R4/$graphql', { interaction: 'operation', operation: 'graphql' }],
    ['GET', '/fhir/R4/Patient?name=x', { interaction: 'search-type', resourceType: 'Patient' }],
    ['POST', '/fhir/R4/Patient', { interaction: 'create', resourceType: 'Patient' }],
    ['PUT', '/fhir/R4/Patient?identifier=a|b', { interaction: 'update', resourceType: 'Patient' }],
    ['DELETE', '/fhir/R4/Patient?identifier=a|b', { interaction: 'delete', resourceType: 'Patient' }],
    ['POST', '/fhir/R4/Patient/_search', { interaction: 'search-type', resourceType: 'Patient' }],
    ['GET', '/fhir/R4/Patient/_history', { interaction: 'history-type', resourceType: 'Patient' }],
    [
      'GET',
      '/fhir/R4/ValueSet/$expand?url=x',
      { interaction: 'operation', resourceType: 'ValueSet', operation: 'expand' },
    ],
    ['GET', '/api/fhir/R4/Patient/1', { interaction: 'read', resourceType: 'Patient' }],
    ['PUT', '/fhir/R4/Patient/1', { interaction: 'update', resourceType: 'Patient' }],
    ['PATCH', '/fhir/R4/Patient/1', { interaction: 'patch', resourceType: 'Patient' }],
    ['DELETE', '/fhir/R4/Patient/1', { interaction: 'delete', resourceType: 'Patient' }],
    ['GET', '/fhir/R4/Patient/1/_history', { interaction: 'history-instance', resourceType: 'Patient' }],
    ['GET', '/fhir/R4/Patient/1/_history/2', { interaction: 'vread', resourceType: 'Patient' }],
    ['POST', '/fhir/R4/Bot/1/$execute', { interaction: 'operation', resourceType: 'Bot', operation: 'execute' }],
    ['GET', '/fhir/R4/Patient/1/Observation', { interaction: 'search-compartment', resourceType: 'Patient' }],
    ['GET', '/fhir/R4/Binary/1', { interaction: 'read', resourceType: 'Binary' }],
  ])('%s %s', (method, url, expected) => {
    expect(describeFhirUrl(method, url)).toEqual(expected);
  });

  it('tells a batch from a transaction by the Bundle type', () => {
    expect(describeFhirUrl('POST', '/fhir/R4', { resourceType: 'Bundle', type: 'transaction' })).toEqual({
      interaction: 'transaction',
    });
    expect(describeFhirUrl('POST', '/fhir/R4/', { resourceType: 'Bundle', type: 'batch' })).toEqual({
      interaction: 'batch',
    });
  });

  it('describes nothing outside the FHIR API, nor what the grammar does not name', () => {
    expect(describeFhirUrl('POST', '/auth/login')).toEqual({});
    expect(describeFhirUrl('GET', '/fhir/R4x/Patient')).toEqual({});
    expect(describeFhirUrl('GET', '/healthcheck')).toEqual({});
    // Not a resource type: nothing a user typed ends up in a label or attribute.
    expect(describeFhirUrl('GET', '/fhir/R4/patient<script>/1')).toEqual({});
    expect(describeFhirUrl('GET', '/fhir/R4/Patient/1/_history/2/x')).toEqual({ resourceType: 'Patient' });
  });
});
