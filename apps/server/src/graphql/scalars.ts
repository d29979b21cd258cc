import {
  GraphQLBoolean,
  GraphQLError,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLScalarType,
  GraphQLString,
  Kind,
  valueFromASTUntyped,
  type ValueNode,
} from 'graphql';

/**
 * FHIR primitive types as GraphQL scalars (hl7.org/fhir/R4/graphql.html#schema): boolean,
 * integer and decimal keep their JSON types, `id` is an ID, and every other primitive (string,
 * code, uri, date, dateTime, instant, base64Binary, markdown, xhtml...) is a String as in JSON.
 */
const PRIMITIVE_SCALARS: Record<string, GraphQLScalarType> = {
  boolean: GraphQLBoolean,
  integer: GraphQLInt,
  positiveInt: GraphQLInt,
  unsignedInt: GraphQLInt,
  decimal: GraphQLFloat,
  id: GraphQLID,
};

export function primitiveScalar(code: string): GraphQLScalarType {
  return PRIMITIVE_SCALARS[code] ?? GraphQLString;
}

/**
 * The value of a field argument that filters a list by a child element (`name(use: official)`):
 * any literal (the spec writes codes bare, as enum values), compared with the element as text.
 */
export const FilterValueScalar = new GraphQLScalarType<string, string>({
  name: 'FilterValue',
  description: 'A primitive value to filter a list by (a code may be written bare: use: official)',
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      return String(value);
    }
    throw new GraphQLError('A filter value must be a string, number or boolean');
  },
  parseLiteral: (ast: ValueNode) => literalText(ast, 'A filter value'),
});

/** Reads a literal written as a string, number, boolean or bare code (an enum literal) as text. */
function literalText(ast: ValueNode, what: string): string {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.ENUM:
    case Kind.INT:
    case Kind.FLOAT:
      return ast.value;
    case Kind.BOOLEAN:
      return String(ast.value);
    default:
      throw new GraphQLError(`${what} must be a string, number, boolean or bare code`, { nodes: ast });
  }
}

const searchScalars = new Map<string, GraphQLScalarType<string, string>>();

/**
 * The value of a search argument of a FHIR search parameter type, named as the spec's schema names
 * them (`active: [token]`, `birthdate: [date]`, `subject: [reference]`): any literal, bare codes
 * included (`gender: male`), passed to the search as text. A string parameter is a plain `String`.
 */
export function searchValueScalar(paramType: string): GraphQLScalarType {
  if (paramType === 'string') {
    return GraphQLString;
  }
  let scalar = searchScalars.get(paramType);
  if (!scalar) {
    const what = `A ${paramType} search value`;
    scalar = new GraphQLScalarType<string, string>({
      name: paramType,
      description: `A value of a ${paramType} search parameter, as in a search URL (hl7.org/fhir/R4/search.html)`,
      serialize: (value) => String(value),
      parseValue: (value) => {
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
          return String(value);
        }
        throw new GraphQLError(`${what} must be a string, number or boolean`);
      },
      parseLiteral: (ast: ValueNode) => literalText(ast, what),
    });
    searchScalars.set(paramType, scalar);
  }
  return scalar;
}

function asResourceJson(value: unknown): Record<string, unknown> {
  if (
    !value ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    typeof (value as { resourceType?: unknown }).resourceType !== 'string'
  ) {
    throw new GraphQLError('A resource must be a JSON object with a resourceType');
  }
  return value as Record<string, unknown>;
}

/**
 * Input of an element whose type is any resource (contained, Bundle.entry.resource,
 * Parameters.parameter.resource): GraphQL input types cannot be unions, so it is FHIR JSON.
 */
export const ResourceJsonScalar = new GraphQLScalarType<Record<string, unknown>, Record<string, unknown>>({
  name: 'ResourceJson',
  description: 'A resource as FHIR JSON (an object with a resourceType)',
  serialize: (value) => asResourceJson(value),
  parseValue: (value) => asResourceJson(value),
  parseLiteral: (ast, variables) => asResourceJson(valueFromASTUntyped(ast, variables)),
});
