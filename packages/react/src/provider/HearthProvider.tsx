import type { HearthClient, ProfileResource } from '@hearth/core';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { UiMetadata } from './metadata.js';

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
}

const HearthContext = createContext<HearthContextValue | undefined>(undefined);

export interface HearthProviderProps {
  client: HearthClient;
  /** The UI metadata, or a loader of it (the app loads it as a lazily fetched module). */
  metadata: UiMetadata | (() => Promise<UiMetadata>);
  /** How links navigate; default: window.location. The app passes its router's navigate. */
  navigate?: Navigate;
  children: ReactNode;
}

/** Gives the components a client, the signed-in profile, navigation and the type metadata. */
export function HearthProvider({ client, metadata, navigate, children }: HearthProviderProps): ReactNode {
  const [profile, setProfile] = useState<ProfileResource | undefined>(undefined);
  const [loading, setLoading] = useState(client.isAuthenticated());
  const [loaded, setLoaded] = useState<UiMetadata | undefined>(typeof metadata === 'function' ? undefined : metadata);

  useEffect(() => {
    if (typeof metadata === 'function') {
      let live = true;
      metadata().then((m) => live && setLoaded(m), console.error);
      return () => {
        live = false;
      };
    }
    setLoaded(metadata);
    return undefined;
  }, [metadata]);

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
    }),
    [client, profile, loading, refreshSession, navigate, loaded],
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

/** The UI metadata; undefined until loaded. */
export function useMetadata(): UiMetadata | undefined {
  return useHearthContext().metadata;
}
