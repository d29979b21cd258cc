/**
 * UCUM unit codes (hl7.org/fhir/R4/datatypes.html#Quantity): a Quantity, or any coded value,
 * whose system is http://unitsofmeasure.org should carry a valid UCUM code. Checked with the UCUM
 * library (platform/ucum.ts) over every object of the resource that names that system. A warning,
 * not an error: 24 of the specification's own examples write 'mcg', 'ea', 'mEq' or 'TAB' with
 * that system, and the specification's examples are valid resources (writes are not refused).
 */
import { createIssue, type OperationOutcomeIssue, type Resource } from '@hearth/core';
import { isValidUcum } from '../platform/ucum.js';
import type { ResourceValidator } from '../storage/types.js';

const UCUM_SYSTEM = 'http://unitsofmeasure.org';

/** Appends an issue for every object under `value` with the UCUM system and an invalid code. */
function collectUnitIssues(value: unknown, path: (string | number)[], issues: OperationOutcomeIssue[]): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object') {
        path.push(i);
        collectUnitIssues(item, path, issues);
        path.pop();
      }
    }
    return;
  }
  const obj = value as Record<string, unknown>;
  if (obj.system === UCUM_SYSTEM && typeof obj.code === 'string' && !isValidUcum(obj.code)) {
    issues.push(
      createIssue('code-invalid', `"${obj.code}" is not a valid UCUM unit code`, `${expression(path)}.code`, 'warning'),
    );
  }
  for (const key in obj) {
    const child = obj[key];
    if (child !== null && typeof child === 'object') {
      path.push(key);
      collectUnitIssues(child, path, issues);
      path.pop();
    }
  }
}

function expression(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The UCUM code problems of a resource (none when every UCUM code is valid). */
export function unitIssues(resource: Resource): OperationOutcomeIssue[] {
  const issues: OperationOutcomeIssue[] = [];
  collectUnitIssues(resource, [resource.resourceType], issues);
  return issues;
}

/** Adds the UCUM checks to a validator, for resources its checks found no error in. */
export function withUnitChecks(inner: ResourceValidator): ResourceValidator {
  return {
    validate(resource, checks) {
      const issues = inner.validate(resource, checks);
      if (typeof resource.resourceType !== 'string' || issues.some((i) => i.severity === 'error')) {
        return issues;
      }
      const units = unitIssues(resource);
      return units.length > 0 ? [...issues, ...units] : issues;
    },
  };
}
