import { fail, forbiddenWith, type Resource } from '@hearth/core';
import type { AccessGuard, AccessInteraction, SqlParam } from '../../storage/types.js';
import { keepFields, withoutFields } from './fields.js';
import { allOf, anyOf, FALSE, WRITE_INTERACTIONS, type AccessLayer } from './layer.js';

export interface GuardOptions {
  /** The project new resources are written to (forced into ProjectMembership.project, User.project). */
  projectId: string;
  superAdmin: boolean;
  /**
   * True when an access policy or SMART scopes restrict rows: then a Binary is readable only when
   * its securityContext resource is (hl7.org/fhir/R4/binary.html#security).
   */
  restricted: boolean;
}

/**
 * Builds a condition with parameters bound only if they survive: layers are composed (AND, OR,
 * FALSE short-circuits) after their parts were built, so values are first collected behind
 * markers and bound, in order, for the markers left in the final text.
 */
const MARK = '\u0001';
const MARKER = new RegExp(`${MARK}(\\d+)${MARK}`, 'g');

function bindSurviving(param: SqlParam, build: (param: SqlParam) => string | undefined): string | undefined {
  const values: unknown[] = [];
  const text = build((value) => {
    values.push(value);
    return `${MARK}${values.length - 1}${MARK}`;
  });
  return text?.replace(MARKER, (_m, i: string) => param(values[Number(i)]));
}

/** The securityContext reference of a Binary row, from its stored JSON. */
function securityContextRef(alias: string): string {
  return `(nullif(${alias}.content, '')::jsonb->'securityContext'->>'reference')`;
}

/**
 * The AccessGuard of one request: the intersection of its layers (role, access policies, SMART
 * scopes). Row conditions go into SQL; field rules apply to what is written and served.
 */
export class LayeredGuard implements AccessGuard {
  constructor(
    private readonly layers: AccessLayer[],
    private readonly options: GuardOptions,
  ) {}

  assertInteraction(resourceType: string, interaction: AccessInteraction): void {
    for (const layer of this.layers) {
      if (!layer.allows(resourceType, interaction)) {
        fail(forbiddenWith(`Forbidden: ${interaction} of ${resourceType} is not allowed for this user`));
      }
    }
  }

  private plainCondition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined {
    return allOf(this.layers.map((l) => l.condition(resourceType, interaction, alias, param)));
  }

  readCondition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined {
    return bindSurviving(param, (p) => this.buildReadCondition(resourceType, interaction, alias, p));
  }

  private buildReadCondition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined {
    const base = this.plainCondition(resourceType, interaction, alias, param);
    if (!this.options.restricted || base === FALSE || (resourceType !== undefined && resourceType !== 'Binary')) {
      return base;
    }
    // A Binary with a security context is readable when that resource is, under the same rules.
    const ref = securityContextRef(alias);
    const target = this.plainCondition(undefined, 'read', 'sc', param);
    const contextVisible = `(${ref} IS NULL OR EXISTS (SELECT 1 FROM resource sc
      WHERE sc.resource_type = split_part(${ref}, '/', 1) AND sc.id = split_part(${ref}, '/', 2)
        AND sc.project_id = ${alias}.project_id AND NOT sc.deleted${target && target !== FALSE ? ` AND (${target})` : target === FALSE ? ' AND FALSE' : ''}))`;
    const binaryRule =
      resourceType === undefined ? `(${alias}.resource_type <> 'Binary' OR ${contextVisible})` : contextVisible;
    return allOf([base, binaryRule]);
  }

  writeCondition(resourceType: string, alias: string, param: SqlParam): string | undefined {
    return bindSurviving(param, (p) =>
      allOf(
        this.layers.map((l) => {
          const allowed = WRITE_INTERACTIONS.filter((i) => l.allows(resourceType, i));
          return anyOf(allowed.map((i) => l.condition(resourceType, i, alias, p)));
        }),
      ),
    );
  }

  writeCheckNeeded(resourceType: string, projectId: string): boolean {
    return this.layers.some((layer) => {
      const rows = layer.writableRows(resourceType);
      return rows === undefined || (rows.project !== undefined && rows.project !== projectId);
    });
  }

  private hidden(resourceType: string): string[] {
    return [...new Set(this.layers.flatMap((l) => l.hiddenFields(resourceType)))];
  }

  private readonly(resourceType: string): string[] {
    return [...new Set(this.layers.flatMap((l) => l.readonlyFields(resourceType)))];
  }

  prepareWrite(resource: Resource, previous: Resource | undefined): Resource {
    const type = resource.resourceType;
    // Hidden fields were never seen by the writer, so their stored values are kept as well.
    let next = keepFields(resource, previous, [...this.readonly(type), ...this.hidden(type)], type);
    if (!this.options.superAdmin) {
      const project = { reference: `Project/${this.options.projectId}` };
      if (type === 'ProjectMembership') {
        next = { ...next, project };
      } else if (type === 'User' && !previous) {
        next = { ...next, project };
      }
    }
    return next;
  }

  hidesFields(resourceType: string): boolean {
    return this.hidden(resourceType).length > 0;
  }

  redact(resource: Resource): Resource {
    return withoutFields(resource, this.hidden(resource.resourceType), resource.resourceType);
  }
}
