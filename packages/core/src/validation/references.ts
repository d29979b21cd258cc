/**
 * Reference rules that need more than one element (hl7.org/fhir/R4/references.html): contained
 * resources must be referenced from their container (dom-3), and inside a Bundle or a Parameters
 * a reference must resolve to an entry when its form says it should (urn:uuid / urn:oid always;
 * a versioned one to that version; never to several entries at once).
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';

type Json = Record<string, unknown>;

/** One reference met while walking a resource. */
export interface ReferenceUse {
  /** Reference.reference, or a canonical / uri value that starts with '#'. */
  reference: string;
  /** Where it is: 'Bundle.entry[0].resource.subject.reference'. */
  path: string;
  /** The resource it is written in, and the resource at the root of its containment. */
  resource: unknown;
  rootResource: unknown;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const LOCAL_URI_TYPES = new Set(['canonical', 'uri', 'url']);

/**
 * Notes a reference while the validator walks a value: Reference.reference, and '#id' in a
 * canonical or uri (R4 dom-3 counts those as references to contained resources too).
 */
export function noteReference(
  uses: ReferenceUse[],
  value: unknown,
  type: string,
  path: string,
  resource: unknown,
  rootResource: unknown,
): void {
  if (type === 'Reference' && isObject(value) && typeof value.reference === 'string') {
    uses.push({ reference: value.reference, path: `${path}.reference`, resource, rootResource });
  } else if (typeof value === 'string' && value.charCodeAt(0) === 35 /* # */ && LOCAL_URI_TYPES.has(type)) {
    uses.push({ reference: value, path, resource, rootResource });
  }
}

/**
 * dom-3: every contained resource is referenced from elsewhere in the resource (its container or
 * another contained resource), or itself refers back to its container with '#'.
 */
export function checkContainedReferenced(
  resource: Json,
  path: string,
  uses: ReferenceUse[],
  issues: OperationOutcomeIssue[],
): void {
  const contained = resource.contained;
  if (!Array.isArray(contained)) {
    return;
  }
  const referenced = new Set<string>();
  const pointsHome = new Set<unknown>();
  for (const use of uses) {
    if (use.rootResource !== resource) {
      continue;
    }
    if (use.reference === '#') {
      pointsHome.add(use.resource);
    } else if (use.reference.charCodeAt(0) === 35) {
      referenced.add(use.reference.slice(1));
    }
  }
  contained.forEach((item, i) => {
    if (!isObject(item) || typeof item.id !== 'string') {
      if (isObject(item)) {
        issues.push(
          createIssue(
            'invariant',
            'A contained resource needs an id to be referenced by (dom-3)',
            `${path}.contained[${i}]`,
          ),
        );
      }
      return;
    }
    if (!referenced.has(item.id) && !pointsHome.has(item)) {
      issues.push(
        createIssue(
          'invariant',
          `Contained resource "${item.id}" is not referenced from the resource or its other contained resources (dom-3)`,
          `${path}.contained[${i}]`,
        ),
      );
    }
  });
}

/** A resource a reference may resolve to inside a Bundle or Parameters. */
export interface Target {
  resource: Json;
  /** Its fullUrl (Bundle.entry.fullUrl, or the parameters-fullUrl extension), if it has one. */
  fullUrl?: string;
}

const HISTORY = /^(.*)\/_history\/([^/]+)$/;
const RELATIVE = /^[A-Z][A-Za-z]+\/[A-Za-z0-9\-.]{1,64}(\/_history\/[A-Za-z0-9\-.]{1,64})?$/;
/** A RESTful absolute URL of a resource: base, type, id. */
export const RESTFUL_URL = /^(https?:\/\/.+\/)([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/;

function versionOf(target: Target): string | undefined {
  const meta = target.resource.meta;
  return isObject(meta) && typeof meta.versionId === 'string' ? meta.versionId : undefined;
}

/**
 * The targets a reference written in `from` may mean (hl7.org/fhir/R4/bundle.html#references):
 * an absolute URL or urn matches a fullUrl; a relative one is resolved against the base of the
 * fullUrl of the entry it is written in, or, without a RESTful fullUrl, matches by type and id.
 */
export function matches(reference: string, from: Target | undefined, targets: Target[]): Target[] {
  const wanted = reference.split('/_history/')[0];
  if (!RELATIVE.test(reference)) {
    return targets.filter((t) => t.fullUrl === wanted);
  }
  const base = from?.fullUrl ? RESTFUL_URL.exec(from.fullUrl)?.[1] : undefined;
  if (base) {
    const absolute = base + wanted;
    const found = targets.filter((t) => t.fullUrl === absolute);
    if (found.length > 0) {
      return found;
    }
  }
  const [type, id] = wanted.split('/');
  return targets.filter((t) => {
    if (t.fullUrl && RESTFUL_URL.test(t.fullUrl)) {
      return t.fullUrl.endsWith(`/${wanted}`);
    }
    return t.resource.resourceType === type && t.resource.id === id;
  });
}

/**
 * Checks the references written in the resources of a Bundle or Parameters against its
 * resources. `strictRelative`: a relative reference that matches nothing is an error too
 * (Parameters: its resources are all there is to refer to).
 */
export function checkResolution(
  targets: Target[],
  uses: ReferenceUse[],
  strictRelative: boolean,
  issues: OperationOutcomeIssue[],
  unresolvedUrn: 'error' | 'warning' = 'error',
): void {
  const byRoot = new Map<unknown, Target>();
  for (const target of targets) {
    byRoot.set(target.resource, target);
  }
  for (const use of uses) {
    const from = byRoot.get(use.rootResource);
    const reference = use.reference;
    if (!from || reference.charCodeAt(0) === 35 || reference.includes('?')) {
      continue; // outside these resources, local ('#id') or conditional
    }
    const found = matches(reference, from, targets);
    const version = HISTORY.exec(reference)?.[2];
    if (found.length === 0) {
      const urn = reference.startsWith('urn:');
      if (urn || (strictRelative && RELATIVE.test(reference))) {
        const severity = urn ? unresolvedUrn : 'error';
        issues.push(
          createIssue(
            'not-found',
            `Unable to resolve the reference "${reference}" to a resource here`,
            use.path,
            severity,
          ),
        );
      }
      continue;
    }
    if (version !== undefined) {
      if (!found.some((t) => versionOf(t) === version)) {
        issues.push(
          createIssue('not-found', `"${reference}": version ${version} of the resource is not here`, use.path),
        );
      }
    } else if (found.length > 1) {
      issues.push(createIssue('multiple-matches', `"${reference}" matches ${found.length} resources here`, use.path));
    }
  }
}
