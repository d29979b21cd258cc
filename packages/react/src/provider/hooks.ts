import {
  isReference,
  normalizeErrorString,
  OperationOutcomeError,
  type Bundle,
  type CapabilityStatement,
  type HearthClient,
  type OperationOutcome,
  type Reference,
  type Resource,
} from '@hearth/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useHearth, useHearthContext, useMetadata } from './HearthProvider.js';
import { getSearchParams, type SearchParamInfo } from './metadata.js';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` whenever `key` changes, keeping only the answer of the latest call (an older,
 * slower request never overwrites a newer one).
 */
export function useAsync<T>(load: (() => Promise<T>) | undefined, key: string): AsyncState<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: !!load });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const fn = loadRef.current;
    if (!fn) {
      setState({ loading: false });
      return;
    }
    const call = ++latest.current;
    setState((s) => ({ data: s.data, loading: true }));
    fn().then(
      (data) => call === latest.current && setState({ data, loading: false }),
      (error: unknown) => call === latest.current && setState({ error, loading: false }),
    );
  }, [key, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Reads a resource by reference (or takes it as given). */
export function useResource<T extends Resource = Resource>(value: Reference | T | string | undefined): AsyncState<T> {
  const client = useHearth();
  let reference: string | undefined;
  let given: T | undefined;
  if (typeof value === 'string') {
    reference = value;
  } else if (isReference(value)) {
    reference = value.reference;
  } else if (value && (value as Resource).resourceType) {
    given = value as T;
  }
  const state = useAsync<T>(
    reference && !reference.startsWith('#') ? () => client.readReference({ reference }) as Promise<T> : undefined,
    reference ?? '',
  );
  return given ? { data: given, error: undefined, loading: false, reload: state.reload } : state;
}

/**
 * The resource a reference points to, for showing its name: references asked for together go out
 * as one search per type and answers are kept a minute (see ReferenceBatcher). A resource given
 * as such is returned as is.
 */
export function useReferenced(value: Reference | Resource | undefined): AsyncState<Resource | undefined> {
  const { references } = useHearthContext();
  const reference = isReference(value) ? value.reference : undefined;
  const given = value && !isReference(value) && (value as Resource).resourceType ? (value as Resource) : undefined;
  const state = useAsync<Resource | undefined>(
    reference && !reference.startsWith('#') ? () => references.load(reference) : undefined,
    reference ?? '',
  );
  return given ? { data: given, error: undefined, loading: false, reload: state.reload } : state;
}

/** A search as a Bundle; `query` is a query string or parameters. */
export function useSearch(
  resourceType: string | undefined,
  query: string | Record<string, string> | undefined,
): AsyncState<Bundle> {
  const client = useHearth();
  const key = `${resourceType}?${typeof query === 'string' ? query : new URLSearchParams(query).toString()}`;
  return useAsync<Bundle>(
    resourceType
      ? () => client.search(resourceType as 'Patient', query, { cache: 'no-cache' }) as Promise<Bundle>
      : undefined,
    key,
  );
}

/** The OperationOutcome of a failed call, when the server sent one. */
export function outcomeOf(error: unknown): OperationOutcome | undefined {
  return error instanceof OperationOutcomeError ? error.outcome : undefined;
}

/** A message for any error: the OperationOutcome's text when there is one. */
export function errorMessage(error: unknown): string {
  return normalizeErrorString(error);
}

type ServerParams = Record<string, SearchParamInfo[]>;
const serverParamsCache = new WeakMap<object, Map<string, Promise<ServerParams>>>();

/** The search parameters the server states per type in its CapabilityStatement (with the project's own). */
function loadServerParams(client: HearthClient, key: string): Promise<ServerParams> {
  let byKey = serverParamsCache.get(client);
  if (!byKey) {
    byKey = new Map();
    serverParamsCache.set(client, byKey);
  }
  let loading = byKey.get(key);
  if (!loading) {
    loading = client
      .get<CapabilityStatement>(client.fhirUrl('metadata'))
      .then((statement) => {
        const out: ServerParams = {};
        for (const resource of statement.rest?.[0]?.resource ?? []) {
          out[resource.type] = (resource.searchParam ?? []).map((p) => ({
            code: p.name,
            type: p.type,
            description: p.documentation,
          }));
        }
        return out;
      })
      .catch(() => ({}));
    byKey.set(key, loading);
  }
  return loading;
}

/**
 * A type's search parameters: those the app knows (with expressions to show values) and any more
 * the server states, such as the project's own SearchParameters.
 */
export function useSearchParams(resourceType: string): SearchParamInfo[] {
  const { client, profile } = useHearthContext();
  const metadata = useMetadata(resourceType);
  const [server, setServer] = useState<ServerParams>({});
  const key = profile ? `${profile.resourceType}/${profile.id}` : '';
  useEffect(() => {
    let live = true;
    void loadServerParams(client, key).then((p) => live && setServer(p));
    return () => {
      live = false;
    };
  }, [client, key]);
  const known = metadata ? getSearchParams(metadata, resourceType) : [];
  const codes = new Set(known.map((p) => p.code));
  const extra = (server[resourceType] ?? []).filter((p) => !codes.has(p.code));
  return extra.length ? [...known, ...extra].sort((a, b) => a.code.localeCompare(b.code)) : known;
}
