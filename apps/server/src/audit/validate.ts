// A Project whose audit settings the trail could not follow is refused (400) when written.
import type { Resource } from '@hearth/core';
import type { ResourceValidator } from '../storage/types.js';
import { settingProblems, type ProjectLike } from './settings.js';

export function withAuditSettingChecks(inner: ResourceValidator): ResourceValidator {
  return {
    validate(resource: Resource, checks) {
      const issues = inner.validate(resource, checks);
      if (resource.resourceType !== 'Project') return issues;
      return [
        ...issues,
        ...settingProblems(resource as ProjectLike).map((p) => ({
          severity: 'error' as const,
          code: 'value' as const,
          details: { text: p.message },
          expression: [p.expression],
        })),
      ];
    },
  };
}
