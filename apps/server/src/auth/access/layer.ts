import type { AccessInteraction, SqlParam } from '../../storage/types.js';

/** A row condition builder over a current-version row alias. */
export type ConditionBuilder = (alias: string, param: SqlParam) => string;

/**
 * One source of access rules (the member's role, its access policies, the token's SMART
 * scopes). A request may do what every layer allows: the guard ANDs their conditions.
 */
export interface AccessLayer {
  allows(resourceType: string, interaction: AccessInteraction): boolean;
  /** Undefined: every row; 'FALSE': none. `resourceType` undefined: rows of any type. */
  condition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined;
  hiddenFields(resourceType: string): string[];
  readonlyFields(resourceType: string): string[];
  /**
   * Which rows of the type this layer lets be written, when that is simple enough to know without
   * the database: every row ({}), or every row of one project ({ project }). Undefined when its
   * write condition looks at the row itself (criteria, compartments) or allows no write.
   */
  writableRows(resourceType: string): WritableRows | undefined;
}

/** Rows a layer lets be written: all of them, or those of one project. */
export interface WritableRows {
  project?: string;
}

export const FALSE = 'FALSE';

export const READ_INTERACTIONS: AccessInteraction[] = ['read', 'vread', 'search', 'history'];
export const WRITE_INTERACTIONS: AccessInteraction[] = ['create', 'update', 'delete'];
export const ALL_INTERACTIONS: AccessInteraction[] = [...READ_INTERACTIONS, ...WRITE_INTERACTIONS];

export function isWrite(interaction: AccessInteraction): boolean {
  return WRITE_INTERACTIONS.includes(interaction);
}

/** A SQL string literal for a resource type name (types are checked identifiers, never user text). */
export function typeLiteral(resourceType: string): string {
  if (!/^[A-Za-z]+$/.test(resourceType)) {
    throw new Error(`Not a resource type: ${resourceType}`);
  }
  return `'${resourceType}'`;
}

/** OR of conditions: undefined when any is unrestricted, FALSE when there are none. */
export function anyOf(conditions: (string | undefined)[]): string | undefined {
  if (conditions.length === 0) {
    return FALSE;
  }
  if (conditions.some((c) => c === undefined)) {
    return undefined;
  }
  const real = (conditions as string[]).filter((c) => c !== FALSE);
  if (real.length === 0) {
    return FALSE;
  }
  return real.length === 1 ? real[0] : real.map((c) => `(${c})`).join(' OR ');
}

/** AND of conditions: undefined when all are unrestricted, FALSE when any is. */
export function allOf(conditions: (string | undefined)[]): string | undefined {
  const real = conditions.filter((c): c is string => c !== undefined);
  if (real.includes(FALSE)) {
    return FALSE;
  }
  if (real.length === 0) {
    return undefined;
  }
  return real.length === 1 ? real[0] : real.map((c) => `(${c})`).join(' AND ');
}
