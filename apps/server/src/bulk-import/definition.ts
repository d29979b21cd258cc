// POST [base]/$import: the Bulk Data import kick-off, as Hearth implements it.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param } from '../operations/definitions/build.js';

export const BULK_IMPORT: OperationDefinition = operationDefinition({
  id: 'import',
  url: `${HEARTH_FHIR_BASE}/OperationDefinition/import`,
  name: 'BulkImport',
  title: 'Bulk Data import',
  code: 'import',
  description:
    'Imports NDJSON files named by a manifest (Parameters: inputFormat, inputSource, input with type and url). Asynchronous: Prefer: respond-async, 202 with Content-Location of the job status (X-Progress while running, DELETE cancels). URLs are fetched through the outbound address rules; Binary/{id} reads a Binary of the project. Lines that cannot be imported are reported as OperationOutcomes in the error file of the result. See docs/bulk-import.md.',
  levels: { system: true },
  affectsState: true,
  parameter: [
    param('inputFormat', 'in', '0..1', 'code', 'application/fhir+ndjson (the default and only format).'),
    param('inputSource', 'in', '0..1', 'uri', 'Where the data comes from (recorded, not fetched).'),
    param('input', 'in', '1..*', undefined, 'One NDJSON file.', [
      param('type', 'in', '1..1', 'code', 'The resource type of every line.'),
      param('url', 'in', '1..1', 'uri', 'An http(s) URL, or Binary/{id} of this server.'),
    ]),
    param('output', 'out', '0..*', undefined, 'Per input: type, url, count written.'),
    param('error', 'out', '0..1', undefined, 'The NDJSON Binary of OperationOutcomes for lines not imported.'),
  ],
});
