// Operations of HL7 implementation guides Hearth implements, at the guides' canonical URLs, with
// the parameters Hearth supports.
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param, type DefinitionFields } from './build.js';

const BULK_DATA = 'http://hl7.org/fhir/uv/bulkdata';
const SUBSCRIPTIONS_BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport';

/** The kick-off parameters of a bulk export (hl7.org/fhir/uv/bulkdata/export.html#query-parameters). */
const EXPORT_PARAMETERS = [
  param(
    '_outputFormat',
    'in',
    '0..1',
    'string',
    'application/fhir+ndjson (the default; also application/ndjson, ndjson).',
  ),
  param('_since', 'in', '0..1', 'instant', 'Only resources changed after this instant.'),
  param('_type', 'in', '0..*', 'string', 'Comma-separated resource types to export.'),
  param('_typeFilter', 'in', '0..*', 'string', 'Type?search queries; per type, the union of its queries is exported.'),
];

function bulkExport(
  id: string,
  name: string,
  title: string,
  description: string,
  levels: DefinitionFields['levels'],
  resource?: string[],
): OperationDefinition {
  return operationDefinition({
    id,
    url: `${BULK_DATA}/OperationDefinition/${id}`,
    name,
    title,
    code: 'export',
    description: `${description} Asynchronous only (Prefer: respond-async): 202 with the status URL, whose completed answer is the manifest of NDJSON files.`,
    levels,
    resource,
    parameter: EXPORT_PARAMETERS,
    publisher: 'HL7 International / FHIR Infrastructure',
  });
}

/** [base]/$export: every resource the caller may search (Binary and AsyncJob only when _type names them). */
export const SYSTEM_EXPORT = bulkExport(
  'export',
  'BulkDataExport',
  'FHIR Bulk Data System Level Export',
  'Exports the resources of every type the caller may search.',
  { system: true },
);

/** Patient/$export: the Patient compartment of every patient. */
export const PATIENT_EXPORT = bulkExport(
  'patient-export',
  'PatientLevelExport',
  'FHIR Bulk Data Patient Level Export',
  'Exports the Patient compartments of all patients.',
  { type: true },
  ['Patient'],
);

/** Group/{id}/$export: the Patient compartments of the group's members. */
export const GROUP_EXPORT = bulkExport(
  'group-export',
  'GroupLevelExport',
  'FHIR Bulk Data Group Level Export',
  'Exports the Patient compartments of the members of the group.',
  { instance: true },
  ['Group'],
);

/** Subscription/$get-ws-binding-token (hl7.org/fhir/uv/subscriptions-backport/channels.html#websockets). */
export const GET_WS_BINDING_TOKEN: OperationDefinition = operationDefinition({
  id: 'backport-subscription-get-ws-binding-token',
  url: `${SUBSCRIPTIONS_BACKPORT}/OperationDefinition/backport-subscription-get-ws-binding-token`,
  name: 'R5SubscriptionGetWsBindingToken',
  title: 'Get WS Binding Token for Subscription Operation',
  code: 'get-ws-binding-token',
  description:
    'A token with which a websocket client binds to a websocket Subscription (at type level, the subscription id as the id parameter).',
  levels: { type: true, instance: true },
  resource: ['Subscription'],
  publisher: 'HL7 International / FHIR Infrastructure',
  parameter: [
    param('id', 'in', '0..1', 'id', 'Type level: the Subscription to get a token for.'),
    param('token', 'out', '1..1', 'string', 'The token to send in the websocket bind-with-token message.'),
    param('expiration', 'out', '1..1', 'dateTime', 'When the token expires.'),
    param('subscription', 'out', '0..*', 'string', 'The subscription the token binds to.'),
    param('websocket-url', 'out', '1..1', 'url', "The server's websocket URL."),
  ],
});
