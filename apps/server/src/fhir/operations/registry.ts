import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, methodNotAllowed, notFoundWith } from '@hearth/core';

export type OperationLevel = 'system' | 'type' | 'instance';

export interface OperationTarget {
  /** Undefined at system level. */
  resourceType?: string;
  /** Set at instance level. */
  id?: string;
}

export type OperationHandler = (
  request: FastifyRequest,
  reply: FastifyReply,
  target: OperationTarget,
) => Promise<unknown>;

export interface OperationDefinitionEntry {
  /** Name without the '$'. */
  name: string;
  /** Canonical URL of the OperationDefinition, listed in the CapabilityStatement. */
  definition?: string;
  /** Where the operation may be invoked; resourceTypes undefined means any type. */
  levels: OperationLevel[];
  resourceTypes?: string[];
  /** GET is allowed only for operations without side effects (R4 operations.html#request). */
  methods: ('GET' | 'POST')[];
  handler: OperationHandler;
}

/** The one registry of FHIR $operations; routes and the CapabilityStatement both derive from it. */
export class OperationRegistry {
  private readonly byName = new Map<string, OperationDefinitionEntry[]>();

  register(entry: OperationDefinitionEntry): void {
    const list = this.byName.get(entry.name) ?? [];
    list.push(entry);
    this.byName.set(entry.name, list);
  }

  all(): OperationDefinitionEntry[] {
    return [...this.byName.values()].flat();
  }

  /** Finds the handler for `$name` at a level, or answers 404/405. */
  resolve(name: string, level: OperationLevel, method: string, resourceType?: string): OperationDefinitionEntry {
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
    const entry = candidates.find((e) => e.methods.includes(method as 'GET' | 'POST'));
    if (!entry) {
      fail(methodNotAllowed(`Operation $${name} does not accept ${method}`));
    }
    return entry;
  }
}
