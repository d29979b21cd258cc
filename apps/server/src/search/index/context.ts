import type { Resource } from '@hearth/core';
import type { ParamDef } from '../registry/params.js';
import type { RowSet } from './rows.js';

/** Context of one resource's extraction. */
export interface ExtractContext {
  resource: Record<string, unknown>;
  /** The server's FHIR base ('https://host/fhir/R4/'): absolute references to it are local. */
  fhirBase?: string;
  /** The parameters of another type (for contained resources). */
  paramsOf?: (resourceType: string) => Iterable<ParamDef>;
}

/** What a kind's `index` sees of the extraction (extract.ts builds it per resource). */
export interface IndexContext extends ExtractContext {
  /** The resource the expressions are evaluated on (a contained one is itself, not its container). */
  evaluated: Record<string, unknown>;
  /** Extracts the rows of a resource held inside this one (passed in, so kinds need not import extract.ts). */
  extractRows(resource: Resource, params: Iterable<ParamDef>, ctx: ExtractContext): RowSet;
}
