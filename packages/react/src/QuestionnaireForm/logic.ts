/**
 * Questionnaire rules (hl7.org/fhir/R4/questionnaire.html): which items are enabled (enableWhen,
 * enableBehavior), initial answers, and the QuestionnaireResponse a filled form becomes.
 */
import type {
  Coding,
  Questionnaire,
  QuestionnaireItem,
  QuestionnaireItemEnableWhen,
  QuestionnaireResponse,
  QuestionnaireResponseItem,
  QuestionnaireResponseItemAnswer,
  Reference,
} from '@hearth/core';

export type ResponseItem = QuestionnaireResponseItem;
export type Answer = QuestionnaireResponseItemAnswer;

type ValueKey =
  | 'valueBoolean'
  | 'valueDecimal'
  | 'valueInteger'
  | 'valueDate'
  | 'valueDateTime'
  | 'valueTime'
  | 'valueString'
  | 'valueUri'
  | 'valueCoding'
  | 'valueQuantity'
  | 'valueReference'
  | 'valueAttachment';

/** The one value of an answer (or of an enableWhen, initial or answerOption, by their answer[x] / value[x]). */
export function answerValue(answer: object | undefined): unknown {
  if (!answer) return undefined;
  const a = answer as Record<string, unknown>;
  for (const key of Object.keys(a)) {
    if ((key.startsWith('value') || key.startsWith('answer')) && a[key] !== undefined && key !== 'answer') {
      return a[key];
    }
  }
  return undefined;
}

/** Every answer given to each question, by linkId, anywhere in the response. */
export function collectAnswers(
  items: ResponseItem[] | undefined,
  out = new Map<string, Answer[]>(),
): Map<string, Answer[]> {
  for (const item of items ?? []) {
    if (item.answer?.length) {
      out.set(item.linkId, [...(out.get(item.linkId) ?? []), ...item.answer]);
    }
    collectAnswers(item.item, out);
    for (const a of item.answer ?? []) collectAnswers(a.item, out);
  }
  return out;
}

function compare(actual: unknown, expected: unknown): number | undefined {
  if (actual === undefined || expected === undefined) return undefined;
  if (typeof actual === 'number' && typeof expected === 'number') return actual - expected;
  if (typeof actual === 'string' && typeof expected === 'string') return actual.localeCompare(expected);
  if (typeof actual === 'boolean' && typeof expected === 'boolean') return actual === expected ? 0 : 1;
  if (typeof actual === 'object' && typeof expected === 'object') {
    const a = actual as Coding & Reference & { value?: number };
    const e = expected as Coding & Reference & { value?: number };
    if (a.code !== undefined || e.code !== undefined) {
      return a.code === e.code && (!a.system || !e.system || a.system === e.system) ? 0 : 1;
    }
    if (typeof a.value === 'number' && typeof e.value === 'number') return a.value - e.value;
    if (a.reference !== undefined) return a.reference === e.reference ? 0 : 1;
  }
  return undefined;
}

function conditionHolds(condition: QuestionnaireItemEnableWhen, answers: Map<string, Answer[]>): boolean {
  const given = answers.get(condition.question) ?? [];
  const expected = answerValue(condition);
  if (condition.operator === 'exists') {
    return given.length > 0 === (expected === true);
  }
  if (condition.operator === '!=') {
    // "True if no answer has a value equal to the enableWhen answer" (R4 enableWhen.operator).
    return !given.some((answer) => compare(answerValue(answer), expected) === 0);
  }
  return given.some((answer) => {
    const c = compare(answerValue(answer), expected);
    if (c === undefined) return false;
    switch (condition.operator) {
      case '=':
        return c === 0;
      case '>':
        return c > 0;
      case '<':
        return c < 0;
      case '>=':
        return c >= 0;
      case '<=':
        return c <= 0;
    }
    return false;
  });
}

/** True when an item is enabled: no enableWhen, or its conditions hold (all, or any per enableBehavior). */
export function isEnabled(item: QuestionnaireItem, answers: Map<string, Answer[]>): boolean {
  const conditions = item.enableWhen ?? [];
  if (!conditions.length) return true;
  const results = conditions.map((c) => conditionHolds(c, answers));
  return item.enableBehavior === 'any' ? results.some(Boolean) : results.every(Boolean);
}

/** The value key of an answer to an item of a type ('decimal' → 'valueDecimal'). */
export function valueKeyFor(type: QuestionnaireItem['type']): ValueKey {
  switch (type) {
    case 'boolean':
      return 'valueBoolean';
    case 'decimal':
      return 'valueDecimal';
    case 'integer':
      return 'valueInteger';
    case 'date':
      return 'valueDate';
    case 'dateTime':
      return 'valueDateTime';
    case 'time':
      return 'valueTime';
    case 'url':
      return 'valueUri';
    case 'choice':
    case 'open-choice':
      return 'valueCoding';
    case 'quantity':
      return 'valueQuantity';
    case 'reference':
      return 'valueReference';
    case 'attachment':
      return 'valueAttachment';
    default:
      return 'valueString';
  }
}

/** Initial response items: one per item (or instance), with initial answers and selected options. */
export function initialItems(items: QuestionnaireItem[] | undefined): ResponseItem[] {
  return (items ?? [])
    .filter((item) => item.type !== 'display')
    .map((item) => {
      const out: ResponseItem = { linkId: item.linkId, text: item.text };
      if (item.type === 'group') {
        out.item = initialItems(item.item);
      } else {
        const answers: Answer[] = [
          ...(item.initial ?? []).map((i) => ({ ...pickValue(i) })),
          ...(item.answerOption ?? []).filter((o) => o.initialSelected).map((o) => ({ ...pickValue(o) })),
        ];
        if (answers.length) out.answer = answers;
        if (item.item?.length) out.item = initialItems(item.item);
      }
      return out;
    });
}

/** The value[x] of an initial or answerOption as an answer's value[x]. */
export function pickValue(o: object): Answer {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(o)) {
    if (key.startsWith('value') && v !== undefined) out[key] = v;
  }
  return out as Answer;
}

function hasValue(answer: Answer): boolean {
  const v = answerValue(answer);
  return v !== undefined && v !== '' && !(typeof v === 'number' && Number.isNaN(v));
}

/** The items to keep: enabled ones with answers or answered children, in questionnaire order. */
export function cleanItems(
  qItems: QuestionnaireItem[] | undefined,
  rItems: ResponseItem[] | undefined,
  answers: Map<string, Answer[]>,
): ResponseItem[] {
  const out: ResponseItem[] = [];
  for (const q of qItems ?? []) {
    if (q.type === 'display' || !isEnabled(q, answers)) continue;
    for (const r of (rItems ?? []).filter((x) => x.linkId === q.linkId)) {
      const children = cleanItems(q.item, r.item, answers);
      const given = (r.answer ?? []).filter(hasValue).map((a) => {
        const { item: _nested, ...rest } = a;
        return rest;
      });
      if (!given.length && !children.length) continue;
      const item: ResponseItem = { linkId: q.linkId };
      if (q.text) item.text = q.text;
      if (given.length) item.answer = given;
      if (children.length) item.item = children;
      out.push(item);
    }
  }
  return out;
}

/** Required questions (enabled ones) left without an answer: their linkIds. */
export function missingRequired(
  qItems: QuestionnaireItem[] | undefined,
  rItems: ResponseItem[] | undefined,
  answers: Map<string, Answer[]>,
): string[] {
  const missing: string[] = [];
  for (const q of qItems ?? []) {
    if (q.type === 'display' || !isEnabled(q, answers)) continue;
    const instances = (rItems ?? []).filter((x) => x.linkId === q.linkId);
    if (q.type === 'group') {
      for (const r of instances.length ? instances : [{ linkId: q.linkId }]) {
        missing.push(...missingRequired(q.item, r.item, answers));
      }
    } else if (q.required && !instances.some((r) => (r.answer ?? []).some(hasValue))) {
      missing.push(q.linkId);
    }
  }
  return missing;
}

/** The QuestionnaireResponse of a filled form. */
export function buildResponse(
  questionnaire: Questionnaire,
  items: ResponseItem[],
  subject?: Reference,
): QuestionnaireResponse {
  const answers = collectAnswers(items);
  const response: QuestionnaireResponse = {
    resourceType: 'QuestionnaireResponse',
    status: 'completed',
    authored: new Date().toISOString(),
    item: cleanItems(questionnaire.item, items, answers),
  };
  const canonical = questionnaire.url ?? (questionnaire.id ? `Questionnaire/${questionnaire.id}` : undefined);
  if (canonical) response.questionnaire = canonical;
  if (subject) response.subject = subject;
  if (!response.item?.length) delete response.item;
  return response;
}
