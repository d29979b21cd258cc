import {
  GraphQLBoolean,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLObjectType,
  GraphQLString,
  GraphQLUnionType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLFieldMap,
  type GraphQLObjectTypeConfig,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { choiceName, type FhirSchema, type TypeSchema } from '@hearth/definitions';
import type { Reference, Resource } from '@hearth/core';
import type { GraphqlContext } from './context.js';
import { recordSlices } from './directives.js';
import { fhirpathFilter } from './fhirpath.js';
import { resolveReference } from './resolvers.js';
import { FilterValueScalar, primitiveScalar, ResourceJsonScalar } from './scalars.js';

type Source = Record<string, unknown>;
export type FieldMap = GraphQLFieldConfigMap<Source, GraphqlContext>;
export type FieldConfig = GraphQLFieldConfig<Source, GraphqlContext>;

/** How a field costs: read by the cost limit (limits.ts) from the field's extensions. */
export type FieldCost = 'read' | 'search' | 'connection' | 'reference' | 'write';

export function costExtension(cost: FieldCost): { hearthCost: FieldCost } {
  return { hearthCost: cost };
}

export type BuiltFieldMap = GraphQLFieldMap<Source, GraphqlContext>;

/**
 * A resource's object type: its elements as configured fields, plus fields built elsewhere and
 * added as they are (reverse references: thousands of fields whose arguments are shared per
 * source type, instead of graphql-js copying the same argument list into every field).
 */
class ResourceObjectType extends GraphQLObjectType<Source, GraphqlContext> {
  private extraAdded = false;

  constructor(
    config: GraphQLObjectTypeConfig<Source, GraphqlContext>,
    private readonly extra: () => BuiltFieldMap,
  ) {
    super(config);
  }

  override getFields(): BuiltFieldMap {
    const fields = super.getFields();
    if (!this.extraAdded) {
      this.extraAdded = true;
      Object.assign(fields, this.extra());
    }
    return fields;
  }
}

/** Code types that mean "any resource": a union in output, FHIR JSON in input. */
const ANY_RESOURCE = new Set(['Resource', 'DomainResource']);

/** 'Patient.contact' → 'PatientContact': backbone types are named by their path. */
function graphqlTypeName(code: string): string {
  return code
    .split('.')
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
    .join('');
}

/**
 * GraphQL types generated from the compact FHIR type schema (packages/definitions), built on
 * demand and cached: one object type per resource, data type and backbone element; one input
 * type per type for mutations; a `Resource` union of every resource type.
 */
export class FhirGraphqlTypes {
  private readonly outputs = new Map<string, GraphQLObjectType>();
  private readonly inputs = new Map<string, GraphQLInputObjectType>();
  private readonly listArgsByType = new Map<string, GraphQLFieldConfigArgumentMap>();
  private readonly names = new Map<string, string>();
  readonly resourceUnion: GraphQLUnionType;

  constructor(
    private readonly schema: FhirSchema,
    /** The concrete resource types (R4 and platform). */
    readonly resourceTypes: string[],
    /** Fields a resource type has besides its elements, already built: reverse references. */
    private readonly resourceFields: (resourceType: string) => BuiltFieldMap,
  ) {
    for (const code of Object.keys(schema.types)) {
      const name = graphqlTypeName(code);
      const other = this.names.get(name);
      if (other !== undefined) {
        throw new Error(`GraphQL type name ${name} stands for both ${other} and ${code}`);
      }
      this.names.set(name, code);
    }
    this.resourceUnion = new GraphQLUnionType({
      name: 'Resource',
      description: 'Any resource; select its fields with `... on Patient { }`',
      types: () => this.resourceTypes.map((t) => this.objectType(t)),
      resolveType: (value: Resource) => value.resourceType,
    });
  }

  private typeSchema(code: string): TypeSchema {
    const t = Object.hasOwn(this.schema.types, code) ? this.schema.types[code] : undefined;
    if (!t) {
      throw new Error(`The type schema has no type ${code}`);
    }
    return t;
  }

  private isPrimitive(code: string): boolean {
    return this.typeSchema(code).kind === 'primitive-type';
  }

  /** The output type of a type code: a scalar, the Resource union, or an object type. */
  output(code: string): GraphQLOutputType {
    if (ANY_RESOURCE.has(code)) {
      return this.resourceUnion;
    }
    return this.isPrimitive(code) ? primitiveScalar(code) : this.objectType(code);
  }

  objectType(code: string): GraphQLObjectType {
    let type = this.outputs.get(code);
    if (!type) {
      const schema = this.typeSchema(code);
      const config: GraphQLObjectTypeConfig<Source, GraphqlContext> = {
        name: graphqlTypeName(code),
        description: schema.url ?? `${code} (hl7.org/fhir/R4)`,
        fields: () => this.outputFields(schema),
      };
      type =
        schema.kind === 'resource'
          ? new ResourceObjectType(config, () => this.resourceFields(code))
          : new GraphQLObjectType(config);
      this.outputs.set(code, type);
    }
    return type;
  }

  /** Each element (choice elements once per type: valueQuantity, valueString...). */
  private elementsOf(schema: TypeSchema): { name: string; code: string; isArray: boolean }[] {
    const out: { name: string; code: string; isArray: boolean }[] = [];
    for (const [name, element] of Object.entries(schema.elements)) {
      if (name.endsWith('[x]')) {
        element.type.forEach((t) => out.push({ name: choiceName(name, t.code), code: t.code, isArray: false }));
      } else if (element.type.length > 0) {
        out.push({ name, code: element.type[0].code, isArray: element.isArray });
      }
    }
    return out;
  }

  private outputFields(schema: TypeSchema): FieldMap {
    const fields: FieldMap = {};
    const isResource = schema.kind === 'resource';
    if (isResource) {
      fields.resourceType = { type: GraphQLString };
    }
    for (const { name, code, isArray } of this.elementsOf(schema)) {
      const type = this.output(code);
      if (this.isPrimitive(code)) {
        fields[name] = { type: isArray ? new GraphQLList(type) : type };
        // A primitive's id and extensions are in `_name` (hl7.org/fhir/R4/json.html#primitive).
        const element = this.objectType('Element');
        fields[`_${name}`] = { type: isArray ? new GraphQLList(element) : element };
      } else if (isArray) {
        fields[name] = { type: new GraphQLList(type), args: this.listArgs(code), resolve: filteredList(name) };
      } else {
        fields[name] = { type };
      }
    }
    if (schema.name === 'Reference') {
      fields.resource = {
        type: this.resourceUnion,
        description: 'The resource referred to (hl7.org/fhir/R4/graphql.html#references)',
        args: {
          optional: { type: GraphQLBoolean, description: 'Null instead of an error when it cannot be resolved' },
          type: {
            type: FilterValueScalar,
            description: 'Only resolve references to this resource type (type: Patient)',
          },
        },
        extensions: costExtension('reference'),
        resolve: (source, args, ctx) => resolveReference(source as Reference, args, ctx),
      };
    }
    return fields;
  }

  /**
   * Arguments of a list element (hl7.org/fhir/R4/graphql.html#list): `_count`, `_offset`,
   * `fhirpath` (a condition on each item: `name(fhirpath: "family.exists()")`), and one per
   * primitive child element, keeping the items whose child has that value (`name(use: official)`,
   * `extension(url: "...")`).
   */
  private listArgs(code: string): GraphQLFieldConfigArgumentMap {
    let args = this.listArgsByType.get(code);
    if (!args) {
      args = {
        _count: { type: GraphQLInt, description: 'Keep at most this many items' },
        _offset: { type: GraphQLInt, description: 'Skip this many items' },
        fhirpath: { type: GraphQLString, description: 'Keep the items for which this FHIRPath expression is true' },
      };
      if (!ANY_RESOURCE.has(code)) {
        // Plain primitive children only: choice values (Extension.valueString and 40 others) would
        // put dozens of arguments on every `extension` field for little use.
        for (const [name, element] of Object.entries(this.typeSchema(code).elements)) {
          const child = element.type[0]?.code;
          if (!name.endsWith('[x]') && child && this.isPrimitive(child) && !(name in args)) {
            args[name] = { type: FilterValueScalar };
          }
        }
      }
      this.listArgsByType.set(code, args);
    }
    return args;
  }

  /** The input type of a type code, for mutations (`res: PatientInput`). */
  input(code: string): GraphQLInputType {
    if (ANY_RESOURCE.has(code)) {
      return ResourceJsonScalar;
    }
    if (this.isPrimitive(code)) {
      return primitiveScalar(code);
    }
    let type = this.inputs.get(code);
    if (!type) {
      const schema = this.typeSchema(code);
      type = new GraphQLInputObjectType({
        name: this.inputName(code),
        fields: () => this.inputFields(schema),
      });
      this.inputs.set(code, type);
    }
    return type;
  }

  /** `PatientInput`; `StructureMapGroup_Input` where the plain name is a backbone's ('StructureMap.group.input'). */
  private inputName(code: string): string {
    const name = `${graphqlTypeName(code)}Input`;
    return this.names.has(name) ? `${graphqlTypeName(code)}_Input` : name;
  }

  private inputFields(schema: TypeSchema): GraphQLInputFieldConfigMap {
    const fields: GraphQLInputFieldConfigMap = {};
    if (schema.kind === 'resource') {
      fields.resourceType = { type: GraphQLString };
    }
    for (const { name, code, isArray } of this.elementsOf(schema)) {
      const type = this.input(code);
      fields[name] = { type: isArray ? new GraphQLList(type) : type };
      if (this.isPrimitive(code)) {
        const element = this.input('Element');
        fields[`_${name}`] = { type: isArray ? new GraphQLList(element) : element };
      }
    }
    return fields;
  }
}

/** Matches an element's value (or any of its values) with a filter argument, as text. */
function matches(value: unknown, wanted: string): boolean {
  if (Array.isArray(value)) {
    return value.some((v) => matches(v, wanted));
  }
  return value !== undefined && value !== null && String(value) === wanted;
}

function filteredList(name: string): FieldConfig['resolve'] {
  return (source, args: Record<string, unknown>, ctx, info) => {
    let items = source[name];
    if (!Array.isArray(items)) {
      return items ?? null;
    }
    for (const [arg, wanted] of Object.entries(args)) {
      if (arg !== '_count' && arg !== '_offset' && arg !== 'fhirpath' && wanted !== null && wanted !== undefined) {
        items = (items as Source[]).filter((item) => item && matches(item[arg], String(wanted)));
      }
    }
    items = fhirpathFilter(items as unknown[], args.fhirpath);
    const offset = typeof args._offset === 'number' ? Math.max(0, args._offset) : 0;
    const count = typeof args._count === 'number' ? Math.max(0, args._count) : undefined;
    const page = (items as unknown[]).slice(offset, count === undefined ? undefined : offset + count);
    recordSlices(ctx.slices, info, page);
    return page;
  };
}
