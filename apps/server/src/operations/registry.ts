import { fail, methodNotAllowed, notFoundWith, type OperationDefinition } from '@hearth/core';
import type { OperationHandler, OperationLevel, OperationMethod } from './types.js';

/**
 * Where Hearth departs from an operation's definition. Each use says why in a comment beside it;
 * the definition stays what the CapabilityStatement points at.
 */
export interface OperationOverride {
  levels?: OperationLevel[];
  methods?: OperationMethod[];
}

/** What a module registers: the OperationDefinition it implements and the handler. */
export interface OperationRegistration {
  definition: OperationDefinition;
  handler: OperationHandler;
  override?: OperationOverride;
  /**
   * Media types whose bodies reach the handler as a stream (a Readable), never held in memory
   * nor bound by the JSON body limit; the fhir layer registers their parsers on operation routes.
   */
  streamedTypes?: string[];
}

/** A registered operation, with where and how it may be invoked derived from its definition. */
export interface OperationEntry extends OperationRegistration {
  /** The name without the '$' (OperationDefinition.code). */
  name: string;
  levels: OperationLevel[];
  /** Undefined: any type (the definition names `Resource`, or none). */
  resourceTypes?: string[];
  methods: OperationMethod[];
}

const LEVELS: OperationLevel[] = ['system', 'type', 'instance'];

/**
 * An entry from its definition: levels from system/type/instance; the types from `resource`
 * (`Resource` for any); GET and POST unless the operation affects state, which is POST only
 * (hl7.org/fhir/R4/operations.html#request).
 */
export function operationEntry(registration: OperationRegistration): OperationEntry {
  const { definition, override } = registration;
  const types = (definition.resource ?? []) as string[];
  return {
    ...registration,
    name: definition.code,
    levels: override?.levels ?? LEVELS.filter((level) => definition[level]),
    resourceTypes: types.length === 0 || types.includes('Resource') ? undefined : types,
    methods: override?.methods ?? (definition.affectsState ? ['POST'] : ['GET', 'POST']),
  };
}

/** The one registry of FHIR $operations: routes, the CapabilityStatement and docs/operations.md derive from it. */
export class OperationRegistry {
  private readonly byName = new Map<string, OperationEntry[]>();

  register(registration: OperationRegistration): void {
    const entry = operationEntry(registration);
    const list = this.byName.get(entry.name) ?? [];
    list.push(entry);
    this.byName.set(entry.name, list);
  }

  all(): OperationEntry[] {
    return [...this.byName.values()].flat();
  }

  /** The OperationDefinition of this id among the registered ones (GET [base]/OperationDefinition/{id}). */
  definition(id: string): OperationDefinition | undefined {
    return this.all().find((e) => e.definition.id === id)?.definition;
  }

  /** The media types some operation takes as a stream. */
  streamedTypes(): string[] {
    return [...new Set(this.all().flatMap((e) => e.streamedTypes ?? []))];
  }

  /** Finds the handler for `$name` at a level, or answers 404/405. */
  resolve(name: string, level: OperationLevel, method: string, resourceType?: string): OperationEntry {
    const candidates = (this.byName.get(name) ?? []).filter(
      (e) =>
        e.levels.includes(level) &&
        (!e.resourceTypes || (resourceType !== undefined && e.resourceTypes.includes(resourceType))),
    );
    if (candidates.length === 0) {
      const where =
        level === 'system' ? 'at system level' : `on ${resourceType}${level === 'instance' ? ' instances' : ''}`;
      fail(notFoundWith(`Operation $${name} is not supported ${where}`));
    }
    const entry = candidates.find((e) => e.methods.includes(method as OperationMethod));
    if (!entry) {
      fail(methodNotAllowed(`Operation $${name} does not accept ${method}`));
    }
    return entry;
  }
}
