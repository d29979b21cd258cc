/**
 * Signing in and staying signed in (CONTRACTS.md, Sign-in flow): email and password through
 * /auth/login with PKCE, the browser redirect through /oauth2/authorize, client credentials, an
 * existing token; token refresh before expiry; sign-out.
 */
import type { ProjectMembership, Reference } from '@hearth/fhir-types';
import { badRequest, isNotFound, OperationOutcomeError } from '../outcome.js';
import { ClientBase } from './base.js';
import { FORM_URLENCODED, resolveUrl } from './http.js';
import { computeCodeChallenge, generateCodeVerifier, jwtExpiresAt, parseJwtPayload, randomString } from './pkce.js';
import { getJson, setJson } from './storage.js';
import type {
  AuthorizeOptions,
  EmailPasswordLoginRequest,
  LoginAuthenticationResponse,
  LoginState,
  ProfileResource,
  SessionDetails,
  SignInOptions,
  TokenResponse,
} from './types.js';

/** The parts of the browser's location and history used by the redirect sign-in. */
interface BrowserLocation {
  readonly href: string;
  assign(url: string): void;
}
interface BrowserHistory {
  readonly state: unknown;
  replaceState(state: unknown, unused: string, url: string): void;
}
const browser = globalThis as { location?: BrowserLocation; history?: BrowserHistory };

/** What a redirect sign-in must remember across the page load: kept in storage until processCode. */
const PENDING_AUTHORIZE = 'pendingAuthorize';

interface PendingAuthorize {
  codeVerifier: string;
  state: string;
  redirectUri: string;
}

export class AuthClient extends ClientBase {
  private clientCredentials: { clientId: string; clientSecret: string } | undefined;
  private details: SessionDetails | undefined;

  /** True when there is a session that is not known to have expired (or can be renewed). */
  isAuthenticated(): boolean {
    return this.session.state !== undefined && (!this.session.isExpired() || this.canRenewSession());
  }

  /**
   * Signs in with email and password: /auth/login with an S256 PKCE challenge, then the membership
   * choice and second factor when the server asks for them (through `options`), then the code
   * exchange. Resolves with the profile the session acts as.
   */
  async signInWithPassword(
    request: Omit<EmailPasswordLoginRequest, 'codeChallenge' | 'codeChallengeMethod'>,
    options: SignInOptions = {},
  ): Promise<ProfileResource> {
    const codeVerifier = generateCodeVerifier();
    let response = await this.startLogin({
      clientId: this.clientId,
      ...request,
      codeChallenge: await computeCodeChallenge(codeVerifier),
      codeChallengeMethod: 'S256',
    });
    response = await this.continueLogin(response, options);
    return this.processCode(response.code as string, { codeVerifier });
  }

  /** The first step alone: POST /auth/login. The caller goes on with chooseProfile / processCode. */
  startLogin(request: EmailPasswordLoginRequest): Promise<LoginAuthenticationResponse> {
    return this.post<LoginAuthenticationResponse>('auth/login', request, 'application/json', { noAuth: true });
  }

  /** Chooses the membership to sign in with: POST /auth/profile. */
  chooseProfile(login: string, membershipId: string): Promise<LoginAuthenticationResponse> {
    return this.post<LoginAuthenticationResponse>(
      'auth/profile',
      { login, profile: membershipId },
      'application/json',
      { noAuth: true },
    );
  }

  /** Gives the second factor of a sign-in (a TOTP code); `enroll` when it is the first one. */
  verifyMfa(login: string, token: string, enroll = false): Promise<LoginAuthenticationResponse> {
    return this.post<LoginAuthenticationResponse>(
      enroll ? 'auth/mfa/login-enroll' : 'auth/mfa/verify',
      { login, token },
      'application/json',
      { noAuth: true },
    );
  }

  /** Walks the steps after /auth/login until the server hands out a code. */
  private async continueLogin(
    first: LoginAuthenticationResponse,
    options: SignInOptions,
  ): Promise<LoginAuthenticationResponse> {
    let response = first;
    // Each step either finishes (code) or asks for one more thing; a handful of steps at most.
    for (let step = 0; step < 5 && !response.code; step++) {
      if (response.mfaRequired || response.mfaEnrollRequired) {
        if (!options.getMfaCode) {
          throw new OperationOutcomeError(badRequest('A second factor is required: pass getMfaCode'));
        }
        const enroll = !!response.mfaEnrollRequired;
        const code = await options.getMfaCode({
          login: response.login,
          enroll,
          enrollUri: response.enrollUri,
          enrollQrCode: response.enrollQrCode,
        });
        response = await this.verifyMfa(response.login, code, enroll);
      } else if (response.memberships) {
        response = await this.chooseMembership(response.login, response.memberships, options);
      } else {
        break;
      }
    }
    if (!response.code) {
      throw new OperationOutcomeError(badRequest('The sign-in did not complete: the server gave no code'));
    }
    return response;
  }

  private async chooseMembership(
    login: string,
    memberships: ProjectMembership[],
    options: SignInOptions,
  ): Promise<LoginAuthenticationResponse> {
    if (!options.chooseMembership) {
      const names = memberships.map((m) => `${m.id} (${m.project?.display ?? m.project?.reference ?? ''})`);
      throw new OperationOutcomeError(
        badRequest(`Choose one of ${memberships.length} memberships with chooseMembership: ${names.join(', ')}`),
      );
    }
    const chosen = await options.chooseMembership(memberships);
    const id = typeof chosen === 'string' ? chosen : chosen.id;
    if (!id) {
      throw new OperationOutcomeError(badRequest('chooseMembership must return a membership or its id'));
    }
    return this.chooseProfile(login, id);
  }

  /**
   * Exchanges an authorization code for tokens (grant_type=authorization_code) and starts the
   * session. The code verifier is the one given, or the one a redirect sign-in stored.
   */
  async processCode(
    code: string,
    options: { codeVerifier?: string; state?: string; redirectUri?: string } = {},
  ): Promise<ProfileResource> {
    const pending = getJson<PendingAuthorize>(this.storage, PENDING_AUTHORIZE);
    if (options.state !== undefined && pending && options.state !== pending.state) {
      throw new OperationOutcomeError(badRequest('The state of the redirect does not match the sign-in', 'state'));
    }
    const form: Record<string, string> = { grant_type: 'authorization_code', code };
    const codeVerifier = options.codeVerifier ?? pending?.codeVerifier;
    if (codeVerifier) {
      form.code_verifier = codeVerifier;
    }
    const redirectUri = options.redirectUri ?? (options.codeVerifier ? undefined : pending?.redirectUri);
    if (redirectUri) {
      form.redirect_uri = redirectUri;
    }
    if (this.clientId) {
      form.client_id = this.clientId;
    }
    setJson(this.storage, PENDING_AUTHORIZE, undefined);
    await this.startSession(await this.requestToken(form));
    return this.requireProfile();
  }

  /**
   * The /oauth2/authorize URL of a redirect sign-in, with a fresh S256 challenge and state; the
   * verifier, state and redirect URI are stored for processCode.
   */
  async getAuthorizeUrl(options: AuthorizeOptions = {}): Promise<string> {
    const redirectUri = options.redirectUri ?? currentPage();
    if (!redirectUri) {
      throw new OperationOutcomeError(badRequest('redirectUri is required outside a browser', 'redirectUri'));
    }
    const pending: PendingAuthorize = { codeVerifier: generateCodeVerifier(), state: randomString(16), redirectUri };
    setJson(this.storage, PENDING_AUTHORIZE, pending);
    const url = new URL(resolveUrl(this.baseUrl, this.options.authorizeUrl ?? 'oauth2/authorize'));
    const params: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: this.clientId,
      redirect_uri: redirectUri,
      // offline_access: a refresh token, so that the session outlives the first access token.
      scope: options.scope ?? 'openid offline_access',
      state: pending.state,
      code_challenge: await computeCodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
      nonce: options.nonce,
      launch: options.launch,
      ...options.params,
    };
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) {
        url.searchParams.set(key, value);
      }
    }
    return url.toString();
  }

  /**
   * The browser redirect sign-in. On the way back (the page URL has `code`), finishes it and
   * resolves with the profile; otherwise sends the browser to the authorization page.
   */
  async signInWithRedirect(options: AuthorizeOptions = {}): Promise<ProfileResource | undefined> {
    const location = browser.location;
    if (!location) {
      throw new OperationOutcomeError(
        badRequest('signInWithRedirect needs a browser; elsewhere use getAuthorizeUrl and processCode'),
      );
    }
    const here = new URL(location.href);
    const code = here.searchParams.get('code');
    if (code) {
      const profile = await this.processCode(code, { state: here.searchParams.get('state') ?? undefined });
      here.searchParams.delete('code');
      here.searchParams.delete('state');
      browser.history?.replaceState(browser.history.state, '', here.toString());
      return profile;
    }
    location.assign(await this.getAuthorizeUrl(options));
    return undefined;
  }

  /**
   * Signs in as a client application (grant_type=client_credentials). The secret is kept in
   * memory, never in storage, to renew the token when it expires.
   */
  async signInWithClientCredentials(clientId: string, clientSecret: string): Promise<ProfileResource> {
    const token = await this.requestToken({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    this.clientCredentials = { clientId, clientSecret };
    await this.startSession(token);
    return this.requireProfile();
  }

  /** Uses a token obtained elsewhere. Its expiry is read from the JWT's `exp` when it has one. */
  setAccessToken(accessToken: string, refreshToken?: string): void {
    this.clientCredentials = undefined;
    this.details = undefined;
    this.cache.clear();
    const issuedAt = parseJwtPayload(accessToken)?.iat;
    this.session.set({
      accessToken,
      refreshToken,
      expiresAt: jwtExpiresAt(accessToken),
      issuedAt: typeof issuedAt === 'number' ? issuedAt * 1000 : undefined,
    });
  }

  /** Ends the session: tells the server (POST /oauth2/logout, best effort) and forgets it here. */
  async signOut(): Promise<void> {
    if (this.session.state) {
      try {
        await this.post(this.options.logoutUrl ?? 'oauth2/logout', {}, 'application/json');
      } catch {
        // The local session ends whatever the server says: it may already have ended there.
      }
    }
    this.clientCredentials = undefined;
    this.details = undefined;
    this.clearSession();
  }

  /** The profile the session acts as, if it has been loaded. */
  getProfile(): ProfileResource | undefined {
    return this.details?.profile;
  }

  /** The session's project reference, from the token response. */
  getProject(): Reference | undefined {
    return this.session.state?.project;
  }

  /** Who the session is (GET /auth/me): user, project, membership, profile. Cached per session. */
  async getSessionDetails(options: { reload?: boolean } = {}): Promise<SessionDetails | undefined> {
    if (!this.session.state) {
      return undefined;
    }
    if (!this.details || options.reload) {
      this.details = await this.get<SessionDetails>('auth/me', { cache: 'no-cache' });
    }
    return this.details;
  }

  /** The profile the session acts as, loading it when needed. */
  async getProfileAsync(): Promise<ProfileResource | undefined> {
    return (await this.getSessionDetails())?.profile;
  }

  private async requireProfile(): Promise<ProfileResource> {
    let profile: ProfileResource | undefined;
    try {
      profile = await this.getProfileAsync();
    } catch (err) {
      // Servers without /auth/me: the token response named the profile; read it.
      const ref = this.session.state?.profile?.reference;
      if (!(err instanceof OperationOutcomeError && isNotFound(err.outcome)) || !ref) {
        throw err;
      }
      profile = await this.get<ProfileResource>(this.fhirUrl(ref));
      this.details = { profile };
    }
    if (!profile) {
      throw new OperationOutcomeError(badRequest('The session has no profile'));
    }
    return profile;
  }

  private requestToken(form: Record<string, string>): Promise<TokenResponse> {
    return this.post<TokenResponse>(this.options.tokenUrl ?? 'oauth2/token', form, FORM_URLENCODED, { noAuth: true });
  }

  private async startSession(token: TokenResponse): Promise<void> {
    this.details = undefined;
    this.cache.clear();
    this.session.set(this.toLoginState(token));
  }

  private toLoginState(token: TokenResponse): LoginState {
    if (!token?.access_token) {
      throw new OperationOutcomeError(badRequest('The token response has no access_token'));
    }
    const issuedAt = Date.now();
    const expiresAt =
      typeof token.expires_in === 'number' ? issuedAt + token.expires_in * 1000 : jwtExpiresAt(token.access_token);
    return {
      accessToken: token.access_token,
      refreshToken: token.refresh_token ?? this.session.state?.refreshToken,
      expiresAt,
      issuedAt,
      project: token.project ?? this.session.state?.project,
      profile: token.profile ?? this.session.state?.profile,
    };
  }

  protected override canRenewSession(): boolean {
    return !!this.session.state?.refreshToken || !!this.clientCredentials;
  }

  /** A new access token: from the refresh token, or by signing in again with client credentials. */
  protected override async renewSession(): Promise<LoginState> {
    const refreshToken = this.session.state?.refreshToken;
    let form: Record<string, string>;
    if (refreshToken) {
      form = { grant_type: 'refresh_token', refresh_token: refreshToken };
      if (this.clientId) {
        form.client_id = this.clientId;
      }
    } else if (this.clientCredentials) {
      form = {
        grant_type: 'client_credentials',
        client_id: this.clientCredentials.clientId,
        client_secret: this.clientCredentials.clientSecret,
      };
    } else {
      throw new OperationOutcomeError(badRequest('The session cannot be renewed'));
    }
    return this.toLoginState(await this.requestToken(form));
  }
}

/** The current page without its query and fragment, as the default redirect URI; undefined outside a browser. */
function currentPage(): string | undefined {
  const href = browser.location?.href;
  if (!href) {
    return undefined;
  }
  const url = new URL(href);
  return url.origin + url.pathname;
}
