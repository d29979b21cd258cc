// The OperationDefinitions of analytics: SQL on FHIR v2's $run, and Hearth's $materialize.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param } from '../operations/definitions/build.js';

const url = (id: string) => `${HEARTH_FHIR_BASE}/OperationDefinition/${id}`;

/** ViewDefinition/$run (SQL on FHIR v2's ViewDefinitionRun, the parameters Hearth supports). */
export const VIEW_RUN: OperationDefinition = operationDefinition({
  id: 'ViewDefinition-run',
  url: url('ViewDefinition-run'),
  name: 'ViewDefinitionRun',
  title: 'Run a ViewDefinition',
  code: 'run',
  description:
    'Runs a SQL on FHIR v2 ViewDefinition over the resources the caller may read (or over inline resources) and answers its rows as CSV, NDJSON, JSON or Parquet. Instance level runs the stored view; type level takes viewResource (inline) or viewReference. Text formats are streamed page by page. See docs/analytics.md.',
  levels: { type: true, instance: true },
  resource: ['ViewDefinition'],
  affectsState: false,
  parameter: [
    param('viewReference', 'in', '0..1', 'Reference', 'Type level: the stored ViewDefinition to run.'),
    param('viewResource', 'in', '0..1', 'Resource', 'Type level: the ViewDefinition to run, inline (POST).'),
    param('_format', 'in', '0..1', 'code', 'csv | ndjson | json (default) | parquet.'),
    param('header', 'in', '0..1', 'boolean', 'CSV: whether the first line names the columns (default true).'),
    param('_limit', 'in', '0..1', 'integer', 'At most this many rows.'),
    param('_since', 'in', '0..1', 'instant', 'Only resources changed after this instant.'),
    param('patient', 'in', '0..1', 'Reference', "Only resources in this patient's compartment."),
    param('resource', 'in', '0..*', 'Resource', 'Run over these resources instead of stored ones (POST).'),
    param('return', 'out', '1..1', 'Binary', 'The rows, in the format asked for.'),
  ],
});

/** ViewDefinition/{id}/$materialize: the view kept as a table of the project's reporting schema. */
export const VIEW_MATERIALIZE: OperationDefinition = operationDefinition({
  id: 'ViewDefinition-materialize',
  url: url('ViewDefinition-materialize'),
  name: 'ViewDefinitionMaterialize',
  title: 'Materialise a ViewDefinition',
  code: 'materialize',
  description:
    "Builds (or rebuilds) the view as a PostgreSQL table in the project's reporting schema (reporting_<project>), kept up to date as resources of its type are written, and readable through the project's read-only reporting role. Project admins only. With drop=true the table is removed instead. See docs/analytics.md.",
  levels: { instance: true },
  resource: ['ViewDefinition'],
  affectsState: true,
  parameter: [
    param('drop', 'in', '0..1', 'boolean', 'Remove the table and stop keeping it.'),
    param('schema', 'out', '0..1', 'string', 'The reporting schema.'),
    param('table', 'out', '0..1', 'string', 'The table within it.'),
    param('role', 'out', '0..1', 'string', 'The read-only role that may read the schema.'),
    param('rows', 'out', '0..1', 'integer', 'Rows written.'),
  ],
});
