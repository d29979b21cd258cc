/**
 * Rules of Bundles and Parameters beyond their invariants (hl7.org/fhir/R4/bundle.html):
 * fullUrl absolute and agreeing with the resource's id, a link relation at most once, searchset
 * entries with a mode and (for matches) an id, a document's entries reachable from its
 * Composition; and the references between the resources they hold (references.ts).
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';
import { checkResolution, isObject, matches, RESTFUL_URL, type ReferenceUse, type Target } from './references.js';

type Json = Record<string, unknown>;

/** A fullUrl is an absolute URI (bundle.html#bundle-unique): it starts with a scheme. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/** Bundles processed as a whole, where a urn:uuid / urn:oid reference that resolves to no entry is an error. */
const SELF_CONTAINED = new Set(['document', 'message', 'transaction', 'batch']);

const PARAMETERS_FULL_URL = 'http://hl7.org/fhir/StructureDefinition/parameters-fullUrl';

function entriesOf(bundle: Json): Json[] {
  return Array.isArray(bundle.entry) ? bundle.entry.filter(isObject) : [];
}

export function checkBundle(bundle: Json, path: string, uses: ReferenceUse[], issues: OperationOutcomeIssue[]): void {
  const type = bundle.type;
  const entries = Array.isArray(bundle.entry) ? bundle.entry : [];
  const targets: Target[] = [];
  entries.forEach((entry, i) => {
    if (!isObject(entry)) {
      return;
    }
    const at = `${path}.entry[${i}]`;
    const fullUrl = typeof entry.fullUrl === 'string' ? entry.fullUrl : undefined;
    const resource = isObject(entry.resource) ? entry.resource : undefined;
    if (fullUrl !== undefined) {
      if (!ABSOLUTE_URI.test(fullUrl)) {
        issues.push(createIssue('value', `The fullUrl must be an absolute URL, not "${fullUrl}"`, `${at}.fullUrl`));
      } else if (resource) {
        fullUrlMatchesResource(fullUrl, resource, `${at}.fullUrl`, issues);
      }
    }
    if (resource) {
      targets.push({ resource, fullUrl });
    }
    if (type === 'searchset') {
      searchsetEntry(entry, resource, at, issues);
    }
  });
  linkRelations(bundle.link, `${path}.link`, issues);
  if (type === 'document') {
    documentReachability(entries, path, uses, issues);
  }
  if (type !== 'history') {
    // A history holds versions of one resource under one fullUrl: references among them are not resolved.
    checkResolution(targets, uses, false, issues, SELF_CONTAINED.has(String(type)) ? 'error' : 'warning');
  }
}

/**
 * A RESTful fullUrl names the resource's own type and id. A warning: several R4 examples
 * (Bundle-lri-example, ...) give entries fullUrls that differ from their ids.
 */
function fullUrlMatchesResource(fullUrl: string, resource: Json, path: string, issues: OperationOutcomeIssue[]): void {
  const restful = RESTFUL_URL.exec(fullUrl);
  if (!restful || typeof resource.resourceType !== 'string') {
    return;
  }
  const [, , type, id] = restful;
  if (type !== resource.resourceType || (typeof resource.id === 'string' && id !== resource.id)) {
    issues.push(
      createIssue(
        'value',
        `The fullUrl "${fullUrl}" does not match the resource ${resource.resourceType}/${String(resource.id ?? '')}`,
        path,
        'warning',
      ),
    );
  }
}

/** A link relation appears at most once (bundle.html: "a link relation ... only once"). */
function linkRelations(links: unknown, path: string, issues: OperationOutcomeIssue[]): void {
  if (!Array.isArray(links)) {
    return;
  }
  const seen = new Set<string>();
  links.forEach((link, i) => {
    if (isObject(link) && typeof link.relation === 'string') {
      if (seen.has(link.relation)) {
        issues.push(
          createIssue('invariant', `The link relation "${link.relation}" can occur only once`, `${path}[${i}]`),
        );
      }
      seen.add(link.relation);
    }
  });
}

/** Search results come from a server: each says why it is there, and matches have an id. */
function searchsetEntry(entry: Json, resource: Json | undefined, path: string, issues: OperationOutcomeIssue[]): void {
  const search = isObject(entry.search) ? entry.search : undefined;
  const mode = typeof search?.mode === 'string' ? search.mode : undefined;
  if (!mode) {
    issues.push(createIssue('required', 'A searchset entry should say its search.mode', `${path}.search`, 'warning'));
  }
  if (
    resource &&
    mode !== 'outcome' &&
    resource.resourceType !== 'OperationOutcome' &&
    typeof resource.id !== 'string'
  ) {
    issues.push(createIssue('required', 'A resource found by a search has an id', `${path}.resource.id`));
  }
}

/**
 * Every entry of a document is reachable from its Composition by following references
 * (bundle.html#document: the document is the Composition and what it refers to).
 */
function documentReachability(
  entries: unknown[],
  path: string,
  uses: ReferenceUse[],
  issues: OperationOutcomeIssue[],
): void {
  const targets: Target[] = [];
  for (const entry of entries) {
    if (isObject(entry) && isObject(entry.resource)) {
      targets.push({
        resource: entry.resource,
        fullUrl: typeof entry.fullUrl === 'string' ? entry.fullUrl : undefined,
      });
    }
  }
  if (targets.length === 0 || targets[0].resource.resourceType !== 'Composition') {
    return; // bdl-11 says so
  }
  const usesByRoot = new Map<unknown, ReferenceUse[]>();
  for (const use of uses) {
    const list = usesByRoot.get(use.rootResource) ?? [];
    list.push(use);
    usesByRoot.set(use.rootResource, list);
  }
  const reached = new Set<Target>([targets[0]]);
  const queue = [targets[0]];
  while (queue.length > 0) {
    const from = queue.pop() as Target;
    for (const use of usesByRoot.get(from.resource) ?? []) {
      for (const target of use.reference.startsWith('#') ? [] : matches(use.reference, from, targets)) {
        if (!reached.has(target)) {
          reached.add(target);
          queue.push(target);
        }
      }
    }
  }
  entries.forEach((entry, i) => {
    if (
      isObject(entry) &&
      isObject(entry.resource) &&
      !reached.has(targets.find((t) => t.resource === entry.resource) as Target)
    ) {
      issues.push(
        createIssue(
          'informational',
          'This entry is not reachable by following references from the Composition',
          `${path}.entry[${i}]`,
          'warning',
        ),
      );
    }
  });
}

/** The resources of a Parameters (with the parameters-fullUrl extension's URL) and of Bundles in it. */
export function checkParameters(parameters: Json, uses: ReferenceUse[], issues: OperationOutcomeIssue[]): void {
  const targets: Target[] = [];
  /** The resources that are parameters themselves (not entries of a Bundle parameter). */
  const direct = new Set<unknown>();
  const collect = (parts: unknown): void => {
    if (!Array.isArray(parts)) {
      return;
    }
    for (const part of parts) {
      if (!isObject(part)) {
        continue;
      }
      if (isObject(part.resource)) {
        const extension = Array.isArray(part.extension)
          ? part.extension.find((e) => isObject(e) && e.url === PARAMETERS_FULL_URL)
          : undefined;
        const fullUrl = isObject(extension) && typeof extension.valueUri === 'string' ? extension.valueUri : undefined;
        targets.push({ resource: part.resource, fullUrl });
        direct.add(part.resource);
        for (const entry of part.resource.resourceType === 'Bundle' ? entriesOf(part.resource) : []) {
          if (isObject(entry.resource)) {
            targets.push({
              resource: entry.resource,
              fullUrl: typeof entry.fullUrl === 'string' ? entry.fullUrl : undefined,
            });
          }
        }
      }
      collect(part.part);
    }
  };
  collect(parameters.parameter);
  // A reference in a parameter's resource must resolve among the parameters' resources: they are
  // all there is to refer to. One in the Parameters itself (valueReference) may name a stored
  // resource, and a Bundle's entries follow the Bundle's rules (checkBundle).
  const all: Target[] = [{ resource: parameters }, ...targets];
  checkResolution(
    all,
    uses.filter((u) => direct.has(u.rootResource)),
    true,
    issues,
  );
  checkResolution(
    all,
    uses.filter((u) => u.rootResource === parameters),
    false,
    issues,
  );
}
