/**
 * The SDK client the commands use, and where its session comes from: HEARTH_ACCESS_TOKEN, then
 * HEARTH_CLIENT_ID + HEARTH_CLIENT_SECRET (client credentials), then the stored profile.
 */
import {
  HearthClient,
  MemoryStorage,
  type HearthClientOptions,
  type LoginState,
  type RequestOptions,
} from '@hearth/core';
import { CliError } from './output.js';
import {
  activeLogin,
  DEFAULT_PROFILE,
  loadProfile,
  ProfileStorage,
  withProfileLock,
  type Profile,
} from './profiles.js';

export const DEFAULT_BASE_URL = 'http://localhost:8103/';

/** The options every command takes (on the root command). */
export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  verbose?: boolean;
}

/**
 * HearthClient plus one thing the CLI needs that the SDK keeps protected: the whole Response of a
 * request sent through the same pipeline (token, renewal, errors as OperationOutcomeError), for
 * the headers of asynchronous requests and for streaming downloads to files.
 */
export class CliClient extends HearthClient {
  sendForResponse(
    method: string,
    url: string,
    options: RequestOptions = {},
    body?: string | Uint8Array,
    contentType?: string,
  ): Promise<Response> {
    return this.send<Response>({
      method,
      url,
      body: body as NonNullable<RequestInit['body']> | undefined,
      contentType,
      options,
      responseType: 'response',
    });
  }

  /**
   * Renewal of a stored session, one run at a time: under the profile's lock, a login that
   * another run renewed meanwhile is taken as it is (its refresh token is the current one);
   * otherwise this run renews it and saves it before letting the others in.
   */
  protected override async renewSession(): Promise<LoginState> {
    const storage = this.storage;
    if (!(storage instanceof ProfileStorage)) {
      return super.renewSession();
    }
    return withProfileLock(storage.profile.name, async () => {
      const stored = storage.storedActiveLogin();
      const mine = this.getActiveLogin();
      if (
        stored?.accessToken &&
        stored.accessToken !== mine?.accessToken &&
        (stored.expiresAt === undefined || stored.expiresAt > Date.now() + RENEWED_MIN_LIFETIME_MS)
      ) {
        return stored;
      }
      const renewed = await super.renewSession();
      storage.setItem('activeLogin', JSON.stringify(renewed));
      return renewed;
    });
  }
}

/** A login renewed by another run is taken only if it still has this long to live. */
const RENEWED_MIN_LIFETIME_MS = 60_000;

/** Where the session of this run came from. */
export type SessionSource = 'access-token' | 'client-credentials-env' | 'profile' | 'none';

export interface Connection {
  hearth: CliClient;
  profileName: string;
  /** The stored profile, when the session is the profile's (undefined with environment credentials). */
  profile?: Profile;
  storage?: ProfileStorage;
  source: SessionSource;
}

export function normalizeBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`Invalid base URL '${url}': expected something like http://localhost:8103/`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`Invalid base URL '${url}': use http or https`);
  }
  const text = parsed.toString();
  return text.endsWith('/') ? text : `${text}/`;
}

export function profileNameOf(options: GlobalOptions): string {
  return options.profile ?? process.env.HEARTH_PROFILE ?? DEFAULT_PROFILE;
}

/** The server of this run: --base-url, HEARTH_BASE_URL, the profile's, or the default. */
export function baseUrlOf(options: GlobalOptions, profile?: Profile): string {
  return normalizeBaseUrl(options.baseUrl ?? process.env.HEARTH_BASE_URL ?? profile?.baseUrl ?? DEFAULT_BASE_URL);
}

function clientOptions(baseUrl: string, extra: HearthClientOptions = {}): HearthClientOptions {
  // No GET cache: every command is one short run, and answers must be current.
  return { baseUrl, cacheTime: 0, ...extra };
}

/**
 * The client for a command. With `requireAuth`, fails with a hint when there is no session at all.
 */
export async function connect(options: GlobalOptions, requireAuth = true): Promise<Connection> {
  const profileName = profileNameOf(options);
  const stored = loadProfile(profileName);
  const baseUrl = baseUrlOf(options, stored);
  const envToken = process.env.HEARTH_ACCESS_TOKEN;
  if (envToken) {
    const hearth = new CliClient(clientOptions(baseUrl, { storage: new MemoryStorage() }));
    hearth.setAccessToken(envToken);
    return { hearth, profileName, source: 'access-token' };
  }
  const envClientId = process.env.HEARTH_CLIENT_ID;
  const envSecret = process.env.HEARTH_CLIENT_SECRET;
  if (envClientId && envSecret) {
    const hearth = new CliClient(clientOptions(baseUrl, { storage: new MemoryStorage() }));
    await hearth.signInWithClientCredentials(envClientId, envSecret);
    return { hearth, profileName, source: 'client-credentials-env' };
  }
  // A stored login is used only against the server it was made for.
  const canSignIn = stored?.authMethod === 'client-credentials' && !!stored.clientSecret;
  if (stored && normalizeBaseUrl(stored.baseUrl) === baseUrl && (activeLogin(stored) || canSignIn)) {
    const storage = new ProfileStorage(stored);
    const hearth = new CliClient(clientOptions(baseUrl, { storage, clientId: stored.clientId }));
    await renewClientCredentials(hearth, stored);
    return { hearth, profileName, profile: stored, storage, source: 'profile' };
  }
  if (requireAuth) {
    const where = stored ? ` (profile '${profileName}' has no login for ${baseUrl})` : '';
    throw new CliError(
      `Not signed in${where}: run 'hearth login', or set HEARTH_ACCESS_TOKEN, or HEARTH_CLIENT_ID and HEARTH_CLIENT_SECRET`,
    );
  }
  const hearth = new CliClient(clientOptions(baseUrl, { storage: new MemoryStorage() }));
  return { hearth, profileName, profile: stored, source: 'none' };
}

/**
 * A client-credentials profile signs in at the start of each run: client credentials give no
 * refresh token, and signing in through the SDK keeps the secret in memory so that it renews the
 * token by itself during a long run (an import). The new token is stored in the profile.
 */
async function renewClientCredentials(hearth: CliClient, profile: Profile): Promise<void> {
  if (profile.authMethod === 'client-credentials' && profile.clientId && profile.clientSecret) {
    await hearth.signInWithClientCredentials(profile.clientId, profile.clientSecret);
  }
}
