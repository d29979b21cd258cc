import type { Logger } from '../../platform/logger.js';
import type { AccessInteraction, SqlParam } from '../../storage/types.js';
import type { AuthState, PolicyGrant } from '../session.js';
import { splitCriteria, type CriteriaCompiler } from './criteria.js';
import { LayeredGuard } from './guard.js';
import { ALL_INTERACTIONS, allOf, FALSE, READ_INTERACTIONS, type AccessLayer, type ConditionBuilder } from './layer.js';
import { RoleLayer, type Role } from './role-layer.js';
import { RuleLayer, type AccessRule } from './rule-layer.js';
import { parseResourceScopes } from './scopes.js';
import { ipRulesOf, type IpRule } from './ip-rules.js';

export interface CompiledAccess {
  guard: LayeredGuard;
  /** Evaluated against each request's address before anything else. */
  ipRules: IpRule[];
  /** The member's rules as an AccessPolicy-like summary, for /auth/me. */
  restricted: boolean;
}

const FALSE_CONDITION: ConditionBuilder = () => FALSE;

/** Fills %name and %name.id from the membership's access parameters; undefined when one is missing. */
export function substitute(text: string, parameters: Record<string, string>): string | undefined {
  let missing = false;
  const out = text.replace(/%([A-Za-z][A-Za-z0-9_-]*)(\.id)?/g, (_m, name: string, idSuffix?: string) => {
    const value = parameters[name];
    if (value === undefined) {
      missing = true;
      return '';
    }
    return idSuffix ? (value.split('/').pop() ?? '') : value;
  });
  return missing ? undefined : out;
}

/** Rows in the compartment of `reference` ("Patient/123"), the resource itself included. */
export function compartmentCondition(reference: string): ConditionBuilder {
  const [type, id] = reference.split('/');
  if (!type || !id) {
    return FALSE_CONDITION;
  }
  return (alias, param) =>
    `(${alias}.compartments && ARRAY[${param(reference)}]::text[] OR (${alias}.resource_type = ${param(type)} AND ${alias}.id = ${param(id)}))`;
}

/** A criteria condition, checked once up front: a criteria that cannot be compiled grants nothing. */
function criteriaCondition(
  resourceType: string,
  criteria: string,
  compile: CriteriaCompiler,
  logger?: Logger,
): ConditionBuilder {
  const { resourceType: named, query } = splitCriteria(criteria);
  if ((named && named !== resourceType) || resourceType === '*') {
    logger?.warn({ resourceType, criteria }, 'access criteria names another resource type: it grants nothing');
    return FALSE_CONDITION;
  }
  if (!query) {
    return () => 'TRUE';
  }
  try {
    compile(
      resourceType,
      query,
      'r',
      (() => {
        let n = 0;
        return () => `$${++n}`;
      })(),
    );
  } catch (err) {
    logger?.warn(
      { resourceType, criteria, err: (err as Error).message },
      'access criteria cannot be compiled: it grants nothing',
    );
    return FALSE_CONDITION;
  }
  return (alias, param) => compile(resourceType, query, alias, param);
}

function both(a: ConditionBuilder | undefined, b: ConditionBuilder | undefined): ConditionBuilder | undefined {
  if (!a || !b) {
    return a ?? b;
  }
  return (alias: string, param: SqlParam) => allOf([a(alias, param), b(alias, param)]) ?? 'TRUE';
}

/** The rules of a membership's access policies (AccessPolicy.resource), parameters filled in. */
export function policyRules(grants: PolicyGrant[], compile: CriteriaCompiler, logger?: Logger): AccessRule[] {
  const rules: AccessRule[] = [];
  for (const { policy, parameters } of grants) {
    for (const entry of policy.resource ?? []) {
      if (!entry.resourceType) {
        continue;
      }
      let interactions = new Set<AccessInteraction>(entry.interaction?.length ? entry.interaction : ALL_INTERACTIONS);
      if (entry.readonly) {
        interactions = new Set([...interactions].filter((i) => READ_INTERACTIONS.includes(i)));
      }
      let condition: ConditionBuilder | undefined;
      const compartment = entry.compartment?.reference ?? policy.compartment?.reference;
      if (compartment) {
        const ref = substitute(compartment, parameters);
        condition = ref ? compartmentCondition(ref) : FALSE_CONDITION;
      }
      if (entry.criteria) {
        const criteria = substitute(entry.criteria, parameters);
        condition = both(
          condition,
          criteria ? criteriaCondition(entry.resourceType, criteria, compile, logger) : FALSE_CONDITION,
        );
      }
      rules.push({
        resourceType: entry.resourceType,
        interactions,
        condition,
        hiddenFields: entry.hiddenFields,
        readonlyFields: entry.readonlyFields,
      });
    }
  }
  return rules;
}

/**
 * The rules of a token's SMART resource scopes; undefined when it has none (then the membership
 * alone decides). patient/ scopes cover the launch patient's compartment only.
 */
export function scopeRules(
  scope: string,
  launchPatient: string | undefined,
  compile: CriteriaCompiler,
  logger?: Logger,
): AccessRule[] | undefined {
  const scopes = parseResourceScopes(scope);
  if (scopes.length === 0) {
    return undefined;
  }
  return scopes.map((s) => {
    let condition: ConditionBuilder | undefined;
    if (s.context === 'patient') {
      condition = launchPatient ? compartmentCondition(launchPatient) : FALSE_CONDITION;
    }
    if (s.query) {
      condition = both(condition, criteriaCondition(s.resourceType, s.query, compile, logger));
    }
    return { resourceType: s.resourceType, interactions: s.interactions, condition };
  });
}

export function roleOf(state: Pick<AuthState, 'superAdmin' | 'projectAdmin'>): Role {
  return state.superAdmin ? 'super' : state.projectAdmin ? 'admin' : 'member';
}

/** Builds the guard of a signed-in member: role ∩ access policies ∩ SMART scopes. */
export function compileAccess(
  state: AuthState,
  launchPatient: string | undefined,
  compile: CriteriaCompiler,
  logger?: Logger,
): CompiledAccess {
  const layers: AccessLayer[] = [new RoleLayer(roleOf(state), { own: state.project.id as string })];
  let restricted = false;
  if (state.grants.length > 0) {
    layers.push(new RuleLayer(policyRules(state.grants, compile, logger)));
    restricted = true;
  }
  const fromScopes = scopeRules(state.scope, launchPatient, compile, logger);
  if (fromScopes) {
    layers.push(new RuleLayer(fromScopes));
    restricted = true;
  }
  const guard = new LayeredGuard(layers, {
    projectId: state.project.id as string,
    superAdmin: state.superAdmin,
    restricted,
  });
  return { guard, ipRules: ipRulesOf(state), restricted };
}
