import type { OperationDefinition, OperationDefinitionParameter } from '@hearth/core';

type Use = 'in' | 'out';

/** One parameter: name, in/out, cardinality ('0..1', '1..*'), FHIR type, and what it is for. */
export function param(
  name: string,
  use: Use,
  cardinality: `${0 | 1}..${1 | '*'}`,
  type: string | undefined,
  documentation: string,
  part?: OperationDefinitionParameter[],
): OperationDefinitionParameter {
  const [min, max] = cardinality.split('..');
  return {
    name,
    use,
    min: Number(min),
    max,
    ...(type ? { type: type as OperationDefinitionParameter['type'] } : {}),
    documentation,
    ...(part ? { part } : {}),
  };
}

export interface DefinitionFields {
  url: string;
  id: string;
  name: string;
  title: string;
  code: string;
  description: string;
  levels: { system?: boolean; type?: boolean; instance?: boolean };
  resource?: string[];
  affectsState?: boolean;
  parameter: OperationDefinitionParameter[];
  publisher?: string;
}

/** An OperationDefinition resource (hl7.org/fhir/R4/operationdefinition.html) from its fields. */
export function operationDefinition(fields: DefinitionFields): OperationDefinition {
  return {
    resourceType: 'OperationDefinition',
    id: fields.id,
    url: fields.url,
    name: fields.name,
    title: fields.title,
    status: 'active',
    kind: 'operation',
    publisher: fields.publisher ?? 'Hearth',
    description: fields.description,
    ...(fields.affectsState !== undefined ? { affectsState: fields.affectsState } : {}),
    code: fields.code,
    ...(fields.resource ? { resource: fields.resource as OperationDefinition['resource'] } : {}),
    system: fields.levels.system ?? false,
    type: fields.levels.type ?? false,
    instance: fields.levels.instance ?? false,
    parameter: fields.parameter,
  };
}
