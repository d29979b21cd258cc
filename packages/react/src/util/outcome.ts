import type { OperationOutcome, OperationOutcomeIssue } from '@hearth/core';

/** An issue's location with the resource type dropped: 'Patient.name[0].family' → 'name[0].family'. */
export function normalizeExpression(expression: string, resourceType?: string): string {
  let e = expression.trim();
  if (resourceType && e.startsWith(`${resourceType}.`)) {
    e = e.slice(resourceType.length + 1);
  } else if (/^[A-Z][A-Za-z]+\./.test(e)) {
    e = e.slice(e.indexOf('.') + 1);
  }
  // Some servers write '[0]' for the first element implicitly; '.name.family' for 'name[0].family'.
  return e.replace(/^\./, '');
}

/** The expressions an issue points at (`expression`, else the deprecated `location`). */
export function issueExpressions(issue: OperationOutcomeIssue): string[] {
  return [...(issue.expression ?? []), ...(issue.location ?? [])];
}

export function issueText(issue: OperationOutcomeIssue): string {
  return issue.details?.text ?? issue.diagnostics ?? issue.code ?? 'Error';
}

/**
 * Groups an OperationOutcome's error issues by the element they concern, so that each form field
 * can show its own. Issues that name no element stay under ''.
 */
export function issuesByPath(outcome: OperationOutcome | undefined, resourceType?: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const issue of outcome?.issue ?? []) {
    if (issue.severity === 'information') {
      continue;
    }
    const expressions = issueExpressions(issue).map((e) => normalizeExpression(e, resourceType));
    for (const key of expressions.length ? expressions : ['']) {
      map.set(key, [...(map.get(key) ?? []), issueText(issue)]);
    }
  }
  return map;
}

/** 'name[0].family' for a path of segments. */
export function pathToExpression(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) {
    out += typeof segment === 'number' ? `[${segment}]` : out ? `.${segment}` : segment;
  }
  return out;
}

/** The issues of one field, also accepting an unindexed expression for the first element of an array. */
export function issuesAt(issues: Map<string, string[]>, path: readonly (string | number)[]): string[] {
  const exact = pathToExpression(path);
  const found = issues.get(exact) ?? [];
  const unindexed = exact.replace(/\[0\]/g, '');
  return unindexed !== exact ? [...found, ...(issues.get(unindexed) ?? [])] : found;
}
