import type { HearthClient, ProfileResource } from '@hearth/core';
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import {
  hasTypeLoaded,
  isKnownResourceType,
  mergeMetadata,
  type UiMetadata,
  type UiMetadataSource,
} from './metadata.js';
import { referenceBatcherFor, type ReferenceBatcher } from './reference-batch.js';

export type Navigate = (to: string) => void;

export interface HearthContextValue {
  client: HearthClient;
  /** The signed-in profile, or undefined when signed out (or not yet known). */
  profile: ProfileResource | undefined;
  /** True while the session is being loaded. */
  loading: boolean;
  /** Reloads the session after a sign-in or sign-out. */
  refreshSession: () => Promise<void>;
  navigate: Navigate;
  metadata: UiMetadata | undefined;
  /** Loads these resource types' definitions (when the metadata comes in parts). */
  requireTypes: (resourceTypes: string[]) => void;
  /** Resolves references for display, batched and kept for a while. */
  references: ReferenceBatcher;
}

const HearthContext = createContext<HearthContextValue | undefined>(undefined);

export interface HearthProviderProps {
  client: HearthClient;
  /**
   * The UI metadata, a loader of all of it, or a source of its parts (the app loads the data types
   * first and each resource type's definitions when a component asks for them).
   */
  metadata: UiMetadata | (() => Promise<UiMetadata>) | UiMetadataSource;
  /** How links navigate; default: window.location. The app passes its router's navigate. */
  navigate?: Navigate;
  children: ReactNode;
}

/** Gives the components a client, the signed-in profile, navigation and the type metadata. */
export function HearthProvider({ client, metadata, navigate, children }: HearthProviderProps): ReactNode {
  const [profile, setProfile] = useState<ProfileResource | undefined>(undefined);
  const [loading, setLoading] = useState(client.isAuthenticated());
  const given = typeof metadata === 'object' && 'types' in metadata ? metadata : undefined;
  const [loaded, setLoaded] = useState<UiMetadata | undefined>(given);
  const base = useRef<Promise<UiMetadata> | undefined>(undefined);
  const requested = useRef(new Set<string>());

  useEffect(() => {
    requested.current = new Set();
    if (typeof metadata === 'object' && 'types' in metadata) {
      base.current = Promise.resolve(metadata);
      setLoaded(metadata);
      return undefined;
    }
    let live = true;
    base.current = typeof metadata === 'function' ? metadata() : metadata.loadBase();
    base.current.then((m) => live && setLoaded(m), console.error);
    return () => {
      live = false;
    };
  }, [metadata]);

  const requireTypes = useCallback(
    (resourceTypes: string[]) => {
      if (typeof metadata !== 'object' || 'types' in metadata) return;
      for (const type of resourceTypes) {
        if (requested.current.has(type)) continue;
        requested.current.add(type);
        const part = metadata.loadType(type);
        if (!part) continue;
        // Merged after the base, so that a type never lands in metadata that is not there yet.
        void Promise.all([base.current, part]).then(
          ([, p]) => setLoaded((m) => (m ? mergeMetadata(m, p) : m)),
          (err: unknown) => {
            requested.current.delete(type);
            console.error(err);
          },
        );
      }
    },
    [metadata],
  );

  const references = useMemo(() => referenceBatcherFor(client), [client]);

  const refreshSession = useCallback(async () => {
    if (!client.isAuthenticated()) {
      setProfile(undefined);
      setLoading(false);
      return;
    }
    setLoading(true);
    try {
      setProfile(await client.getProfileAsync());
    } catch {
      setProfile(undefined);
    } finally {
      setLoading(false);
    }
  }, [client]);

  useEffect(() => {
    void refreshSession();
  }, [refreshSession]);

  const value = useMemo<HearthContextValue>(
    () => ({
      client,
      profile,
      loading,
      refreshSession,
      navigate: navigate ?? ((to) => window.location.assign(to)),
      metadata: loaded,
      requireTypes,
      references,
    }),
    [client, profile, loading, refreshSession, navigate, loaded, requireTypes, references],
  );
  return <HearthContext.Provider value={value}>{children}</HearthContext.Provider>;
}

export function useHearthContext(): HearthContextValue {
  const value = useContext(HearthContext);
  if (!value) {
    throw new Error('Hearth components must be inside a <HearthProvider>');
  }
  return value;
}

export function useHearth(): HearthClient {
  return useHearthContext().client;
}

export function useProfile(): ProfileResource | undefined {
  return useHearthContext().profile;
}

/**
 * The UI metadata, with the definitions of the resource types named; undefined until they are
 * loaded. A type that does not exist does not hold it back (the caller says it is unknown).
 */
export function useMetadata(...resourceTypes: (string | undefined)[]): UiMetadata | undefined {
  const { metadata, requireTypes } = useHearthContext();
  const wanted = resourceTypes.filter((t): t is string => !!t);
  const key = wanted.join(',');
  useEffect(() => {
    if (key) requireTypes(key.split(','));
  }, [key, requireTypes]);
  if (!metadata) return undefined;
  return wanted.every((t) => hasTypeLoaded(metadata, t) || !isKnownResourceType(metadata, t)) ? metadata : undefined;
}
