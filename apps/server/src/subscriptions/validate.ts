import { createIssue, evalFhirPath, type OperationOutcomeIssue, type Resource, type Subscription } from '@hearth/core';
import type { ResourceValidator } from '../storage/types.js';
import { isStoredResourceType } from '../storage/tables.js';
import { splitCriteria } from './model.js';

const EXT_BASES = ['https://medplum.com/fhir/StructureDefinition/', 'http://medplum.com/fhir/StructureDefinition/'];
const INTERACTION_URLS = EXT_BASES.map((b) => `${b}subscription-supported-interaction`);
const FHIRPATH_URLS = EXT_BASES.map((b) => `${b}fhir-path-criteria-expression`);
const MAX_ATTEMPTS_URLS = EXT_BASES.map((b) => `${b}subscription-max-attempts`);

interface Extension {
  url?: string;
  valueCode?: unknown;
  valueString?: unknown;
  valueInteger?: unknown;
}

/**
 * What would make an active Subscription never fire, or fire in a way its author did not mean:
 * reported when it is written (a 400 naming the element), not discovered when nothing arrives.
 * Subscriptions that are off, in error or ended are stored as they are.
 */
export function subscriptionIssues(resource: Resource): OperationOutcomeIssue[] {
  const sub = resource as unknown as Subscription & { extension?: Extension[] };
  if (sub.status !== 'active' && sub.status !== 'requested') {
    return [];
  }
  const issues: OperationOutcomeIssue[] = [];
  const criteria = splitCriteria(sub.criteria);
  if (!criteria) {
    issues.push(
      createIssue(
        'invalid',
        `criteria "${sub.criteria ?? ''}" is not a search ("Type?params")`,
        'Subscription.criteria',
      ),
    );
  } else if (!isStoredResourceType(criteria.resourceType)) {
    issues.push(
      createIssue(
        'invalid',
        `criteria names an unknown resource type "${criteria.resourceType}"`,
        'Subscription.criteria',
      ),
    );
  }
  const endpoint = sub.channel?.endpoint ?? '';
  switch (sub.channel?.type) {
    case 'rest-hook':
      if (!/^Bot\/[A-Za-z0-9\-.]{1,64}$/.test(endpoint) && !isHttpUrl(endpoint)) {
        issues.push(
          createIssue(
            'invalid',
            'A rest-hook endpoint is an http(s) URL, or Bot/{id} to run a bot',
            'Subscription.channel.endpoint',
          ),
        );
      }
      break;
    case 'email':
      if (!/^(mailto:)?[^\s@]+@[^\s@]+$/i.test(endpoint.trim())) {
        issues.push(
          createIssue(
            'invalid',
            'An email endpoint is an address (mailto:name@example.org)',
            'Subscription.channel.endpoint',
          ),
        );
      }
      break;
    case 'websocket':
      break;
    default:
      issues.push(
        createIssue(
          'not-supported',
          `Channel type "${String(sub.channel?.type ?? '')}" is not delivered here: use rest-hook, websocket or email`,
          'Subscription.channel.type',
        ),
      );
  }
  const extensions = Array.isArray(sub.extension) ? sub.extension : [];
  extensions.forEach((ext, i) => {
    const where = `Subscription.extension[${i}]`;
    if (INTERACTION_URLS.includes(ext.url ?? '')) {
      if (ext.valueCode !== 'create' && ext.valueCode !== 'update' && ext.valueCode !== 'delete') {
        issues.push(createIssue('invalid', 'The interaction filter is one of create, update, delete', where));
      }
    } else if (FHIRPATH_URLS.includes(ext.url ?? '')) {
      const expression = typeof ext.valueString === 'string' ? ext.valueString : '';
      const problem = fhirPathProblem(expression, criteria?.resourceType ?? 'Resource');
      if (problem) {
        issues.push(createIssue('invalid', `The FHIRPath filter does not parse: ${problem}`, where));
      }
    } else if (MAX_ATTEMPTS_URLS.includes(ext.url ?? '')) {
      if (typeof ext.valueInteger !== 'number' || !Number.isInteger(ext.valueInteger) || ext.valueInteger < 1) {
        issues.push(createIssue('invalid', 'subscription-max-attempts is a whole number of at least 1', where));
      }
    }
  });
  return issues;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Why a FHIRPath filter cannot be used, or undefined (tried on an empty resource of the type). */
function fhirPathProblem(expression: string, resourceType: string): string | undefined {
  if (!expression.trim()) {
    return 'it is empty';
  }
  try {
    const probe = { resourceType };
    evalFhirPath(expression, probe, { current: probe, previous: probe });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The repository's validator, with the checks above for Subscription resources. */
export function withSubscriptionChecks(validator: ResourceValidator): ResourceValidator {
  return {
    validate(resource, checks) {
      const issues = validator.validate(resource, checks);
      return resource.resourceType === 'Subscription' ? [...issues, ...subscriptionIssues(resource)] : issues;
    },
  };
}
