import type { AccessInteraction, SqlParam } from '../../storage/types.js';
import {
  anyOf,
  FALSE,
  isWrite,
  typeLiteral,
  WRITE_INTERACTIONS,
  type AccessLayer,
  type ConditionBuilder,
  type WritableRows,
} from './layer.js';

/** One compiled grant: a type (or '*'), the interactions it allows, and the rows it covers. */
export interface AccessRule {
  resourceType: string;
  interactions: Set<AccessInteraction>;
  /** Undefined: every row of the type in the project. */
  condition?: ConditionBuilder;
  hiddenFields?: string[];
  readonlyFields?: string[];
}

/**
 * A set of grants where any rule that allows an interaction opens the rows its condition covers
 * (the union of the rules): access policies with several resource entries or several policies,
 * and SMART scopes.
 */
export class RuleLayer implements AccessLayer {
  constructor(private readonly rules: AccessRule[]) {}

  private matching(resourceType: string, interaction: AccessInteraction): AccessRule[] {
    return this.rules.filter(
      (r) => (r.resourceType === resourceType || r.resourceType === '*') && r.interactions.has(interaction),
    );
  }

  allows(resourceType: string, interaction: AccessInteraction): boolean {
    return this.matching(resourceType, interaction).length > 0;
  }

  condition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined {
    if (resourceType !== undefined) {
      return anyOf(this.matching(resourceType, interaction).map((r) => r.condition?.(alias, param)));
    }
    // Rows of any type: each named type with its own rules (wildcard rules included), then
    // every other type under the wildcard rules alone.
    const named = [...new Set(this.rules.filter((r) => r.resourceType !== '*').map((r) => r.resourceType))];
    const parts: string[] = [];
    for (const type of named) {
      const cond = this.condition(type, interaction, alias, param);
      if (cond !== FALSE) {
        parts.push(
          cond === undefined
            ? `${alias}.resource_type = ${typeLiteral(type)}`
            : `(${alias}.resource_type = ${typeLiteral(type)} AND (${cond}))`,
        );
      }
    }
    const wildcard = this.rules.filter((r) => r.resourceType === '*' && r.interactions.has(interaction));
    if (wildcard.length > 0) {
      const cond = anyOf(wildcard.map((r) => r.condition?.(alias, param)));
      if (cond !== FALSE) {
        const others = named.length ? `${alias}.resource_type NOT IN (${named.map(typeLiteral).join(', ')})` : 'TRUE';
        parts.push(cond === undefined ? others : `(${others} AND (${cond}))`);
      }
    }
    return parts.length ? anyOf(parts) : FALSE;
  }

  writableRows(resourceType: string): WritableRows | undefined {
    // A rule without a row condition opens every row to its interactions: if one grants a write,
    // the layer's write condition (an OR over the rules) is no condition at all.
    const open = WRITE_INTERACTIONS.some((i) => this.matching(resourceType, i).some((r) => r.condition === undefined));
    return open ? {} : undefined;
  }

  hiddenFields(resourceType: string): string[] {
    // Several rules may cover one type; a field hidden by any of them stays hidden.
    return this.rules
      .filter((r) => r.resourceType === resourceType || r.resourceType === '*')
      .flatMap((r) => r.hiddenFields ?? []);
  }

  readonlyFields(resourceType: string): string[] {
    const rules = this.rules.filter((r) => r.resourceType === resourceType || r.resourceType === '*');
    return rules.flatMap((r) => r.readonlyFields ?? []);
  }

  /** For tests and /auth/me: does any rule write this type? */
  writes(resourceType: string): boolean {
    return this.rules.some(
      (r) => (r.resourceType === resourceType || r.resourceType === '*') && [...r.interactions].some(isWrite),
    );
  }
}
