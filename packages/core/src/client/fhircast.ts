/**
 * FHIRcast (fhircast.org 3.0) for the SDK: the event shape Hearth's hub takes and hands out, and
 * the builder HearthClient.fhircastPublish uses.
 */
import type { Reference } from '@hearth/fhir-types';
import type { Resource } from '../fhir-types.js';
import { generateId } from '../ids.js';

/** The events Hearth's hub distributes. */
export type FhircastEventName =
  | 'Patient-open'
  | 'Patient-close'
  | 'Encounter-open'
  | 'Encounter-close'
  | 'ImagingStudy-open'
  | 'ImagingStudy-close'
  | 'DiagnosticReport-open'
  | 'DiagnosticReport-update'
  | 'DiagnosticReport-select'
  | 'DiagnosticReport-close'
  | 'SyncError';

/** One item of an event's context: a key with a resource, or with a reference (or several). */
export interface FhircastContextItem {
  key: string;
  resource?: Resource;
  reference?: Reference | Reference[];
}

export interface FhircastEvent {
  timestamp: string;
  id: string;
  event: {
    'hub.topic': string;
    'hub.event': FhircastEventName | string;
    context: FhircastContextItem[];
    'context.versionId'?: string;
    'context.priorVersionId'?: string;
  };
}

/** GET /fhircast/{topic}: the current context ('' and [] when nothing is open). */
export interface FhircastCurrentContext {
  'context.type': string;
  'context.versionId'?: string;
  context: FhircastContextItem[];
}

/** An event ready to publish: a fresh id and the current time. */
export function createFhircastEvent(
  topic: string,
  name: FhircastEventName,
  context: FhircastContextItem[],
  versions: { versionId?: string; priorVersionId?: string } = {},
): FhircastEvent {
  return {
    timestamp: new Date().toISOString(),
    id: generateId(),
    event: {
      'hub.topic': topic,
      'hub.event': name,
      context,
      ...(versions.versionId ? { 'context.versionId': versions.versionId } : {}),
      ...(versions.priorVersionId ? { 'context.priorVersionId': versions.priorVersionId } : {}),
    },
  };
}
