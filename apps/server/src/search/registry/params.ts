import type { SearchParamType } from '@hearth/core';
import { getTypeSchema, type ElementSchema } from '@hearth/definitions';
import { compileExpression, type Evaluator } from '../extract/evaluate.js';

/** The fields of a SearchParameter resource that search uses (hl7.org/fhir/R4/searchparameter.html). */
export interface SearchParameterResource {
  resourceType: 'SearchParameter';
  id?: string;
  url?: string;
  name?: string;
  status?: string;
  description?: string;
  code: string;
  base: string[];
  type: SearchParamType;
  expression?: string;
  target?: string[];
  component?: { definition: string; expression: string }[];
}

/** A composite parameter's part: its own type and an expression relative to the composite's element. */
export interface ComponentDef {
  type: SearchParamType;
  expression: string;
  evaluate?: Evaluator;
}

/** A search parameter as it applies to one resource type. */
export interface ParamDef {
  code: string;
  type: SearchParamType;
  url: string;
  resourceType: string;
  description?: string;
  /** The part of the expression that applies to this resource type. */
  expression?: string;
  evaluate?: Evaluator;
  /** Allowed target types of a reference parameter (undefined: any). */
  target?: string[];
  components?: ComponentDef[];
  /** Read from a resource column instead of index rows. */
  column?: 'id' | 'last_updated' | 'compartments';
  /** Defined by a SearchParameter resource in a project. */
  custom?: boolean;
}

/** The parts of an expression's top-level union (`A.code | B.code`), trimmed. */
export function unionParts(expression: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i];
    if (c === "'" && expression[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      parts.push(expression.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(expression.slice(start).trim());
  return parts;
}

/**
 * Splits an expression on top-level '|' and keeps the parts that apply to `resourceType`
 * (those starting with it, with Resource or DomainResource, or with no type at all).
 */
export function expressionFor(expression: string, resourceType: string): string | undefined {
  const kept = unionParts(expression).filter((p) => {
    const m = /^\(*\s*([A-Za-z]+)/.exec(p);
    const head = m?.[1] ?? '';
    if (!/^[A-Z]/.test(head)) return true;
    return head === resourceType || head === 'Resource' || head === 'DomainResource';
  });
  return kept.length > 0 ? kept.join(' | ') : undefined;
}

/**
 * The code of a token parameter whose values include every code of the element `element` of
 * `resourceType` (its expression, or a part of its union, is `Type.element`, or the element's
 * CodeableConcept choice: `(Type.element as CodeableConcept)`, `Type.element.ofType(CodeableConcept)`).
 */
export function elementTokenParam(
  params: Map<string, ParamDef>,
  resourceType: string,
  element: string,
): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(element)) return undefined;
  const path = `${resourceType}.${element}`;
  const forms = new Set([path, `${path} as CodeableConcept`, `${path}.ofType(CodeableConcept)`]);
  const bare = (part: string): string => {
    let p = part.trim();
    while (p.startsWith('(') && p.endsWith(')')) p = p.slice(1, -1).trim();
    return p;
  };
  for (const p of params.values()) {
    if (p.type !== 'token' || p.column || !p.expression) continue;
    if (unionParts(p.expression).some((part) => forms.has(bare(part)))) return p.code;
  }
  return undefined;
}

const compiled = new Map<string, Evaluator | null>();

/** Compiles an expression once per process. */
export function compileOnce(expression: string): Evaluator | undefined {
  let fn = compiled.get(expression);
  if (fn === undefined) {
    fn = compileExpression(expression) ?? null;
    compiled.set(expression, fn);
  }
  return fn ?? undefined;
}

/** Builds the definition of one SearchParameter for one of its base types. */
export function toParamDef(
  sp: SearchParameterResource,
  resourceType: string,
  lookupComponentType: (definitionUrl: string) => SearchParamType | undefined,
  custom = false,
): ParamDef | undefined {
  const def: ParamDef = {
    code: sp.code,
    type: sp.type,
    url: sp.url ?? '',
    resourceType,
    description: sp.description,
    target: sp.target,
    custom: custom || undefined,
  };
  if (sp.code === '_id') {
    def.column = 'id';
    return def;
  }
  if (sp.code === '_lastUpdated') {
    def.column = 'last_updated';
    return def;
  }
  if (!sp.expression) {
    return def;
  }
  const expression = expressionFor(sp.expression, resourceType);
  if (!expression) {
    return undefined;
  }
  def.expression = expression;
  def.evaluate = compileOnce(expression);
  if (sp.type === 'composite') {
    def.components = (sp.component ?? []).map((c) => {
      let type = lookupComponentType(c.definition) ?? 'token';
      // R4 swaps the definitions of DocumentReference-relationship's parts (relatesto is the
      // reference, relation the code): trust the element's own type when reference and
      // non-reference disagree.
      const elementType = elementTypeAt(expression, c.expression);
      const implied = elementType === 'Reference' ? 'reference' : elementType === 'code' ? 'token' : undefined;
      if (implied && (implied === 'reference') !== (type === 'reference')) type = implied;
      return { type, expression: c.expression, evaluate: compileOnce(c.expression) };
    });
  }
  return def;
}

/** The FHIR type of a plain dotted path ('DocumentReference.relatesTo' + 'code'), when it is one. */
function elementTypeAt(base: string, relative: string): string | undefined {
  const path = `${base}.${relative}`;
  if (!/^[A-Za-z]+(\.[A-Za-z]+)+$/.test(path)) return undefined;
  const [root, ...names] = path.split('.');
  let type: string | undefined = root;
  for (const name of names) {
    const el: ElementSchema | undefined = type ? getTypeSchema(type)?.elements[name] : undefined;
    if (!el || el.type.length !== 1) return undefined;
    type = el.type[0].code;
  }
  return type;
}
