/**
 * The rules the validator applies to a whole resource once its elements are walked: contained
 * resources referenced (dom-3), and the rules of Bundles and Parameters (bundle-rules.ts).
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
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
  }
}
