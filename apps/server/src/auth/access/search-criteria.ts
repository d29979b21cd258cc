import { badRequest, fail, parseSearchRequest } from '@hearth/core';
import type { SqlParam } from '../../storage/types.js';
import { compileFilter } from '../../search/query/conditions.js';
import { QueryContext } from '../../search/query/context.js';
import type { SearchParamRegistry } from '../../search/registry/project-params.js';
import type { CriteriaCompiler } from './criteria.js';

/**
 * A query context that binds through the caller's statement and names its aliases apart
 * (ap_…), so a criteria condition can sit inside any search, read or history query.
 */
class EmbeddedContext extends QueryContext {
  private count = 0;

  constructor(
    registry: SearchParamRegistry,
    projectId: string,
    projects: string[] | undefined,
    private readonly outer: SqlParam,
  ) {
    // Strict: a criteria parameter the search module does not know must not be silently ignored.
    super(registry, projectId, projects, '', true, undefined);
  }

  override bind(value: unknown, cast?: string): string {
    const placeholder = this.outer(value);
    return cast ? `${placeholder}::${cast}` : placeholder;
  }

  override alias(prefix: string): string {
    return `ap_${prefix}${++this.count}`;
  }
}

/**
 * Access policy criteria and SMART v2 scope queries compiled by the search module's filter
 * compiler (every parameter type, modifiers, chains, _has): the policy is enforced by the same
 * SQL that search uses, over the same index tables. Chained rows are limited to `projects`.
 */
export function searchCriteriaCompiler(
  registry: SearchParamRegistry,
  projectId: string,
  projects: string[] | undefined,
): CriteriaCompiler {
  return (resourceType, query, alias, param) => {
    const request = parseSearchRequest(resourceType, new URLSearchParams(query), {
      paramType: (t, code) => registry.get(t || resourceType, code.split(/[.:]/)[0], projectId)?.type,
    });
    const ctx = new EmbeddedContext(registry, projectId, projects, param);
    const conditions: string[] = [];
    for (const filter of request.filters ?? []) {
      const condition = compileFilter(ctx, { alias, resourceType }, filter);
      if (condition === undefined) {
        fail(badRequest(`Criteria parameter "${filter.code}" cannot be applied to ${resourceType}`));
      }
      conditions.push(`(${condition})`);
    }
    if (request.filter || request.sortRules?.length || request.include?.length || request.revInclude?.length) {
      fail(badRequest(`Criteria of ${resourceType} may hold search parameters only`));
    }
    return conditions.length ? conditions.join(' AND ') : 'TRUE';
  };
}
