import { createIssue, isValidId, type Resource } from '@hearth/core';
import type { ResourceValidator } from '../storage/types.js';
import { isStoredResourceType } from '../storage/tables.js';
import type { ElementShaper } from './elements.js';

/** Validation of every write against the type's definition. */
export function createValidator(): ResourceValidator {
  return {
    validate(resource: Resource) {
      if (!isStoredResourceType(resource.resourceType)) {
        return [createIssue('invalid', `Unknown resource type "${String(resource.resourceType)}"`, 'resourceType')];
      }
      if (resource.id !== undefined && !isValidId(resource.id)) {
        return [createIssue('invalid', 'Invalid id', `${resource.resourceType}.id`)];
      }
      return [];
    },
  };
}

export function createShaper(): ElementShaper {
  return {
    summaryElements: () => undefined,
    mandatoryElements: () => undefined,
  };
}
