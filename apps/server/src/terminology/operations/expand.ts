// hl7.org/fhir/R4/valueset-operation-expand.html
import { randomUUID } from 'node:crypto';
import { badRequest, fail, notFoundWith, type ValueSet, type ValueSetExpansionParameter } from '@hearth/core';
import type { OperationRegistration } from '../../operations/registry.js';
import { standardDefinition } from '../../operations/definitions/standard.js';
import { jsonResult } from '../../operations/result.js';
import { expandDefinition, MAX_EXPANSION } from '../expand.js';
import { findValueSet, findValueSetById, splitCanonical, type ValueSetRow } from '../resolve.js';
import { scopeOf, type TerminologyDeps } from './context.js';
import { nonNegative, readParams } from './params.js';

const SPECS = {
  url: { type: 'uri' },
  valueSet: { type: 'resource' },
  valueSetVersion: { type: 'string' },
  context: { type: 'uri' },
  filter: { type: 'string' },
  date: { type: 'dateTime' },
  offset: { type: 'integer' },
  count: { type: 'integer' },
  includeDesignations: { type: 'boolean' },
  includeDefinition: { type: 'boolean' },
  activeOnly: { type: 'boolean' },
  excludeNested: { type: 'boolean' },
  excludeNotForUI: { type: 'boolean' },
  displayLanguage: { type: 'code' },
} as const;

const DATE = /^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

export function expandOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('ValueSet-expand'),
    async handler(input) {
      const { target, context } = input;
      const params = readParams(input, SPECS, { name: 'valueSet', resourceType: 'ValueSet' });
      const scope = scopeOf(context);
      const date = params.date as string | undefined;
      if (date !== undefined && !DATE.test(date)) {
        fail(badRequest(`Parameter date must be a FHIR dateTime, not "${date}"`, 'date'));
      }
      let source: ValueSet | ValueSetRow;
      if (target.id) {
        const row = await findValueSetById(deps.pool, scope, target.id);
        if (!row) {
          fail(notFoundWith(`ValueSet/${target.id} not found`));
        }
        source = row;
      } else if (params.valueSet) {
        source = params.valueSet as ValueSet;
      } else if (typeof params.url === 'string') {
        const { url, version } = splitCanonical(params.url);
        const requested = (params.valueSetVersion as string | undefined) ?? version;
        const row = await findValueSet(deps.pool, scope, url, { version: requested, date });
        if (!row) {
          const at = requested ? ` version ${requested}` : date ? ` as of ${date}` : '';
          fail(notFoundWith(`ValueSet ${url}${at} not found`));
        }
        source = row;
      } else {
        fail(badRequest('$expand needs a url, a valueSet, or a ValueSet id', 'url'));
      }
      const count = nonNegative('count', params.count, MAX_EXPANSION);
      const offset = nonNegative('offset', params.offset) ?? 0;
      const page = await expandDefinition(deps.pool, scope, source, {
        filter: params.filter as string | undefined,
        count,
        offset,
        date,
        activeOnly: params.activeOnly === true,
        excludeNotForUI: params.excludeNotForUI === true,
        includeDesignations: params.includeDesignations === true,
      });

      const echoed: ValueSetExpansionParameter[] = [];
      for (const name of ['filter', 'date'] as const) {
        if (typeof params[name] === 'string') echoed.push({ name, valueString: params[name] as string });
      }
      if (count !== undefined) echoed.push({ name: 'count', valueInteger: count });
      if (offset) echoed.push({ name: 'offset', valueInteger: offset });
      for (const name of ['activeOnly', 'excludeNotForUI', 'includeDesignations'] as const) {
        if (params[name] === true) echoed.push({ name, valueBoolean: true });
      }

      const result: ValueSet = {
        resourceType: 'ValueSet',
        ...(isRow(source) ? { id: source.resourceId } : source.id ? { id: source.id } : {}),
        ...(source.url ? { url: source.url } : {}),
        ...(source.version ? { version: source.version } : {}),
        ...(source.name ? { name: source.name } : {}),
        ...(source.title ? { title: source.title } : {}),
        status: (source.status as ValueSet['status']) ?? 'active',
        ...(params.includeDefinition === true && source.compose ? { compose: source.compose } : {}),
        expansion: {
          identifier: `urn:uuid:${randomUUID()}`,
          timestamp: new Date().toISOString(),
          total: page.total,
          offset: page.offset,
          ...(echoed.length ? { parameter: echoed } : {}),
          ...(page.contains.length > 0 ? { contains: page.contains } : {}),
        },
      };
      return jsonResult(result);
    },
  };
}

function isRow(source: ValueSet | ValueSetRow): source is ValueSetRow {
  return (source as ValueSetRow).resourceId !== undefined;
}
