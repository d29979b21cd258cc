/**
 * Invariants (hl7.org/fhir/R4/conformance-rules.html#constraints): the FHIRPath constraints of
 * the StructureDefinitions, evaluated with the `fhirpath` package and its R4 model. Each
 * expression is compiled once per validator (per expression and the type it is evaluated on);
 * `error` constraints give errors, `warning` ones warnings, at the element's expression.
 */
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';
import type { ValidatorConstraint } from './schema.js';
import { HOLDS_WITHOUT_EVALUATION } from './invariant-shortcuts.js';

/**
 * Invariants of R4 that are not evaluated as written, each with the reason. The others are
 * evaluated as the specification states them (the copies in the R4 definitions Hearth reads
 * already carry the published fixes of app-4, bdl-8, ras-2 and tim-9).
 */
export const INVARIANTS_NOT_EVALUATED: Readonly<Record<string, string>> = {
  'ele-1':
    'every element has a value or children: checked by the structural walk (empty objects, an id alone, `_x` without a value), which sees every element anyway',
  'ext-1': 'an extension has a value or extensions, not both: checked by the structural walk (validator.ts)',
  'txt-1':
    'htmlChecks() is not a FHIRPath function of the fhirpath package: narrative.ts checks the XHTML subset of hl7.org/fhir/R4/narrative.html',
  'txt-2': 'htmlChecks() as txt-1: narrative.ts checks that the XHTML has text or an image',
  'dom-3':
    'contained resources must be referenced: checked by references.ts, which also counts references from other contained resources and the "#" reference to the container',
  'ctm-1':
    'member.resolve() needs the referenced resource; a reference outside the resource being validated cannot be resolved here',
  'dom-6':
    'a best-practice guideline (a resource should have narrative), not a rule: Hearth generates no narrative and reports none missing, as most servers do; every resource without text would otherwise carry the warning',
  'dom-r4b':
    'belongs to the R4B SubscriptionStatus backport in the definitions Hearth reads, not to R4 (resources of R4B may contain each other only)',
};

const ignoreTrace = (): void => {};

/** Invariants evaluated with a corrected expression, each with the reason. */
export const INVARIANT_CORRECTIONS: Readonly<Record<string, { expression: string; reason: string }>> = {
  'que-7': {
    expression: "operator = 'exists' implies (answer is boolean)",
    reason:
      "R4 writes `answer is Boolean`, the FHIRPath System type, which a FHIR boolean answer is not under a strict engine; FHIR's `boolean` is meant",
  },
  'que-12': {
    expression: 'enableWhen.count() > 1 implies enableBehavior.exists()',
    reason:
      'R4 says "more than one enableWhen" but writes `count() > 2` (an erratum, corrected in R4B and R5 and by the reference validator)',
  },
  'sdf-4': {
    expression: "abstract = true or baseDefinition.exists() or kind = 'logical'",
    reason:
      'the specification publishes its pattern logical models (Definition, Event, FiveWs, Request) without a baseDefinition; they are R4 examples and valid',
  },
};

type Evaluator = (node: unknown, variables: Record<string, unknown>) => unknown[];

/** The variables of an expression: the resource it is in and, for a contained one, its container. */
export interface InvariantContext {
  resource: unknown;
  rootResource: unknown;
}

/**
 * A constraint fails only when it evaluates to `false`. An empty result (an operand that is
 * absent, as in ref-1 on a Reference with only a display, or per-1 comparing dates of different
 * precision) is not a violation: the specification's own examples rely on it.
 */
function holds(result: unknown[]): boolean {
  return !(result.length === 1 && result[0] === false);
}

export class InvariantChecker {
  private readonly evaluators = new Map<string, Evaluator | null>();

  /** Constraints that are evaluated, from a type's or element's list (null when none). */
  static applicable(constraints: ValidatorConstraint[] | undefined): ValidatorConstraint[] | undefined {
    const list = constraints?.filter((c) => !Object.hasOwn(INVARIANTS_NOT_EVALUATED, c.key));
    return list && list.length > 0 ? list : undefined;
  }

  /**
   * Evaluates `constraints` on one value of type `typeName` (a resource, data type, backbone path
   * such as 'Patient.contact', or primitive) and adds an issue per constraint that fails.
   */
  check(
    constraints: ValidatorConstraint[],
    typeName: string,
    isResource: boolean,
    node: unknown,
    context: InvariantContext,
    path: string,
    issues: OperationOutcomeIssue[],
  ): void {
    const variables = { resource: context.resource, rootResource: context.rootResource };
    for (const constraint of constraints) {
      const expression = INVARIANT_CORRECTIONS[constraint.key]?.expression ?? constraint.expression;
      if (HOLDS_WITHOUT_EVALUATION.get(expression)?.(node)) {
        continue;
      }
      const evaluate = this.evaluator(expression, isResource ? undefined : typeName);
      if (!evaluate) {
        continue;
      }
      let ok: boolean;
      try {
        ok = holds(evaluate(node, variables));
      } catch {
        // A function the engine lacks or a value it cannot compare: not a verdict on the resource.
        continue;
      }
      if (!ok) {
        issues.push(
          createIssue(
            'invariant',
            `Constraint failed: ${constraint.key}: ${constraint.human}`,
            path,
            constraint.severity === 'warning' ? 'warning' : 'error',
          ),
        );
      }
    }
  }

  private evaluator(expression: string, base: string | undefined): Evaluator | undefined {
    const key = base === undefined ? expression : `${base}\n${expression}`;
    let evaluator = this.evaluators.get(key);
    if (evaluator === undefined) {
      try {
        const fn = fhirpath.compile(base === undefined ? expression : { base, expression }, r4Model, {
          resolveInternalTypes: false,
          traceFn: ignoreTrace, // several R4 expressions call trace(); it would print to the console
        });
        evaluator = (node, variables) => fn(node, variables as never) as unknown[];
      } catch {
        evaluator = null; // an expression the parser refuses is left out rather than failing every resource
      }
      this.evaluators.set(key, evaluator);
    }
    return evaluator ?? undefined;
  }
}
