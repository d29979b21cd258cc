/**
 * The part of the type schema the validator reads. @hearth/definitions builds the full schema
 * (getSchema() in Node); any object of this shape works, so the validator stays isomorphic and
 * can run in a browser with a schema fetched or bundled as JSON.
 */
export interface ValidatorElement {
  path: string;
  min: number;
  /** '1', '*', or a number as a string. */
  max: string;
  isArray: boolean;
  /** Allowed types; targetProfile lists the StructureDefinition URLs a Reference may point to. */
  type: { code: string; targetProfile?: string[] }[];
  binding?: { strength: string; valueSet: string };
}

export interface ValidatorType {
  name: string;
  kind: string;
  abstract?: boolean;
  elements: Record<string, ValidatorElement>;
}

export interface ValidatorSchema {
  types: Record<string, ValidatorType>;
  /** Expansions of required-binding value sets: URL -> ['system|code', ...]. */
  valueSets: Record<string, string[]>;
}
