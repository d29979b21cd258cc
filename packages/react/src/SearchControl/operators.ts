import { Operator, type SearchParamType } from '@hearth/core';

/** The comparisons that make sense for each parameter type (hl7.org/fhir/R4/search.html). */
export function operatorsFor(type: SearchParamType | string): { value: Operator; label: string }[] {
  const o = (value: Operator, label: string) => ({ value, label });
  switch (type) {
    case 'string':
      return [
        o(Operator.EQUALS, 'starts with'),
        o(Operator.CONTAINS, 'contains'),
        o(Operator.EXACT, 'is exactly'),
        o(Operator.MISSING, 'missing'),
      ];
    case 'token':
      return [
        o(Operator.EQUALS, 'is'),
        o(Operator.NOT, 'is not'),
        o(Operator.TEXT, 'text matches'),
        o(Operator.MISSING, 'missing'),
      ];
    case 'reference':
      return [o(Operator.EQUALS, 'is'), o(Operator.MISSING, 'missing')];
    case 'date':
      return [
        o(Operator.EQUALS, 'on'),
        o(Operator.NOT_EQUALS, 'not on'),
        o(Operator.GREATER_THAN_OR_EQUALS, 'on or after'),
        o(Operator.LESS_THAN_OR_EQUALS, 'on or before'),
        o(Operator.GREATER_THAN, 'after'),
        o(Operator.LESS_THAN, 'before'),
        o(Operator.MISSING, 'missing'),
      ];
    case 'number':
    case 'quantity':
      return [
        o(Operator.EQUALS, '='),
        o(Operator.NOT_EQUALS, '≠'),
        o(Operator.GREATER_THAN, '>'),
        o(Operator.LESS_THAN, '<'),
        o(Operator.GREATER_THAN_OR_EQUALS, '≥'),
        o(Operator.LESS_THAN_OR_EQUALS, '≤'),
        o(Operator.APPROXIMATELY, '≈'),
        o(Operator.MISSING, 'missing'),
      ];
    case 'uri':
      return [
        o(Operator.EQUALS, 'is'),
        o(Operator.ABOVE, 'above'),
        o(Operator.BELOW, 'below'),
        o(Operator.MISSING, 'missing'),
      ];
    default:
      return [o(Operator.EQUALS, 'is'), o(Operator.MISSING, 'missing')];
  }
}

export function operatorLabel(type: string, operator: Operator): string {
  return operatorsFor(type).find((x) => x.value === operator)?.label ?? operator;
}
