/**
 * The rules the validator applies to a whole resource once its elements are walked: contained
 * resources referenced (dom-3), the rules of Bundles and Parameters (bundle-rules.ts), and a
 * composite SearchParameter's components.
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';
import { checkBundle, checkParameters } from './bundle-rules.js';
import { checkContainedReferenced, isObject, type ReferenceUse } from './references.js';

export function checkResourceRules(
  resource: unknown,
  path: string,
  uses: ReferenceUse[],
  issues: OperationOutcomeIssue[],
): void {
  if (!isObject(resource)) {
    return;
  }
  checkContainedReferenced(resource, path, uses, issues);
  if (resource.resourceType === 'Bundle') {
    checkBundle(resource, path, uses, issues);
  } else if (resource.resourceType === 'Parameters') {
    checkParameters(resource, uses, issues);
  } else if (resource.resourceType === 'SearchParameter') {
    checkCompositeComponents(resource, path, issues);
  }
}

/**
 * A composite parameter matches tuples of its components' values (search.html#composite): with
 * fewer than two components there is no tuple to match, and no server can index it.
 */
function checkCompositeComponents(parameter: Record<string, unknown>, path: string, issues: OperationOutcomeIssue[]) {
  if (parameter.type !== 'composite') {
    return;
  }
  const components = Array.isArray(parameter.component) ? parameter.component.length : 0;
  if (components < 2) {
    issues.push(
      createIssue(
        'invariant',
        `A composite SearchParameter defines two or more components (it has ${components})`,
        components === 0 ? path : `${path}.component`,
      ),
    );
  }
}
