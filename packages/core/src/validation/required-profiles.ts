/**
 * Profiles an instance SHALL conform to without declaring them: R4 makes the vital signs profiles
 * mandatory for Observations with the codes of its table (hl7.org/fhir/R4/observation-vitalsigns.html),
 * and the reference validator applies them by code as well. The schema names the profiles and
 * the codes (`profiles`, `profilesByCode`: @hearth/definitions' vital-signs.ts); this looks the
 * code up (one Map lookup per coding, only for the resource types that have rules) and checks the
 * resource against the profile with the profile validator, whose compiled profiles are kept for
 * the life of the schema.
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import type { InvariantContext } from './invariants.js';
import { ProfileValidator } from './profiles.js';
import type { ValidatorSchema } from './schema.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class RequiredProfiles {
  /** Per resource type: 'system|code' → the rank of its rule and the profile (the lowest rank wins). */
  private readonly rules = new Map<string, Map<string, { rank: number; profile: string }>>();
  private readonly validator: ProfileValidator;

  constructor(schema: ValidatorSchema) {
    const profiles = schema.profiles ?? {};
    this.validator = new ProfileValidator({
      schema,
      resolve: (url) => (Object.hasOwn(profiles, url) ? profiles[url] : undefined),
    });
    (schema.profilesByCode ?? []).forEach((rule, rank) => {
      let byCode = this.rules.get(rule.type);
      if (!byCode) {
        byCode = new Map();
        this.rules.set(rule.type, byCode);
      }
      for (const code of rule.codes) {
        if (!byCode.has(code)) {
          byCode.set(code, { rank, profile: rule.profile });
        }
      }
    });
  }

  /** Whether any rule applies to resources of this type (when none, a resource costs nothing). */
  has(resourceType: string): boolean {
    return this.rules.has(resourceType);
  }

  /** The profile `resource` must conform to because of its code, if any. */
  profileOf(resource: Json, resourceType: string): string | undefined {
    const byCode = this.rules.get(resourceType);
    const code = byCode ? resource.code : undefined;
    if (!byCode || !isObject(code) || !Array.isArray(code.coding)) {
      return undefined;
    }
    let found: { rank: number; profile: string } | undefined;
    for (const coding of code.coding) {
      if (isObject(coding) && typeof coding.system === 'string' && typeof coding.code === 'string') {
        const rule = byCode.get(`${coding.system}|${coding.code}`);
        if (rule && (!found || rule.rank < found.rank)) {
          found = rule;
        }
      }
    }
    return found?.profile;
  }

  /**
   * Adds the issues of `resource` (at `path`) against the profile its code requires, if any; not
   * those at an element the base definitions already found in error (a missing status is one
   * problem, not two).
   */
  check(
    resource: Json,
    resourceType: string,
    path: string,
    context: InvariantContext,
    issues: OperationOutcomeIssue[],
  ) {
    const profile = this.profileOf(resource, resourceType);
    if (!profile) {
      return;
    }
    const found = this.validator.validate(resource, profile, { expression: path, rootResource: context.rootResource });
    const known = new Set(issues.filter((i) => i.severity === 'error').map((i) => i.expression?.[0]));
    issues.push(...found.filter((i) => !known.has(i.expression?.[0])));
  }
}
