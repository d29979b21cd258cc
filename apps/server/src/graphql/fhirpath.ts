import { badRequest, evalFhirPath, fail } from '@hearth/core';

/**
 * The spec's `fhirpath` argument (hl7.org/fhir/R4/graphql.html#list, #searching) as a predicate:
 * an item (a list element, or a match of a search page) is kept when the expression's result is
 * `[true]` or a non-empty collection that is not `[false]`, so that both conditions
 * (`family.exists()`) and selections (`where(use = 'official')`) read naturally. Undefined when
 * there is no expression. An expression that does not parse, or fails to evaluate, is a 400 naming
 * the argument (checked at once, even when there is nothing to filter).
 */
export function fhirpathPredicate(expression: unknown): ((item: unknown) => boolean) | undefined {
  if (typeof expression !== 'string' || expression.trim() === '') {
    return undefined;
  }
  const evaluate = (item: unknown): unknown[] => {
    try {
      return evalFhirPath(expression, item);
    } catch (err) {
      fail(badRequest(`fhirpath: ${err instanceof Error ? err.message : String(err)}`, 'fhirpath'));
    }
  };
  evaluate({});
  return (item) => {
    const result = evaluate(item);
    return result.length > 0 && !(result.length === 1 && result[0] === false);
  };
}

/** The items the `fhirpath` argument keeps (all of them without one). */
export function fhirpathFilter<T>(items: T[], expression: unknown): T[] {
  const keep = fhirpathPredicate(expression);
  return keep ? items.filter(keep) : items;
}
