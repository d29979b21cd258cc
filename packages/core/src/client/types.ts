/**
 * The SDK's contract types: what the platform endpoints take and answer (see CONTRACTS.md), and
 * the options of the client itself. Field names follow the spec's contract types.
 */
import type {
  Bot,
  ClientApplication,
  Identifier,
  Patient,
  Practitioner,
  Project,
  ProjectMembership,
  Reference,
  RelatedPerson,
} from '@hearth/fhir-types';
import type { ClientStorage } from './storage.js';

/** The `fetch` the client calls: the global one, or any with the same shape (for tests, proxies). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** The resource a signed-in user acts as (hl7.org/fhir/R4 profile resources of a membership). */
export type ProfileResource = Patient | Practitioner | RelatedPerson | ClientApplication | Bot;

export interface HearthClientOptions {
  /** The server's base URL, e.g. 'https://hearth.example.org/'. Default 'http://localhost:8103/'. */
  baseUrl?: string;
  /** The ClientApplication id this app signs in as. */
  clientId?: string;
  /** Path of the FHIR API below baseUrl. Default 'fhir/R4/'. */
  fhirUrlPath?: string;
  /** Authorization endpoint, absolute or relative to baseUrl. Default 'oauth2/authorize'. */
  authorizeUrl?: string;
  /** Token endpoint, absolute or relative to baseUrl. Default 'oauth2/token'. */
  tokenUrl?: string;
  /** Logout endpoint, absolute or relative to baseUrl. Default 'oauth2/logout'. */
  logoutUrl?: string;
  /** The fetch to use. Default: the global fetch. */
  fetch?: FetchLike;
  /**
   * Where the session (tokens, profile) and redirect-flow state are kept. Default: localStorage in
   * a browser, memory elsewhere.
   */
  storage?: ClientStorage;
  /** How long GET responses are cached, in ms. Default 60 000 in a browser, 0 elsewhere. */
  cacheTime?: number;
  /** Refresh the access token this many ms before it expires. Default 300 000 (5 minutes). */
  refreshGracePeriod?: number;
  /** Retries of a GET answered 429 or 503 (after Retry-After). Default 2. */
  maxRetries?: number;
  /** Called when the server rejects the session and it cannot be renewed. */
  onUnauthenticated?: () => void;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** A request body fetch accepts. */
export type RequestBody = NonNullable<RequestInit['body']>;

/** The fetch cache modes (fetch.spec.whatwg.org/#concept-request-cache-mode). */
export type CacheMode = 'default' | 'no-store' | 'reload' | 'no-cache' | 'force-cache' | 'only-if-cached';

/** Per-request options: any RequestInit field, plus a few of the client's own. */
export interface RequestOptions extends Omit<RequestInit, 'headers' | 'body' | 'method' | 'cache'> {
  headers?: Record<string, string>;
  /** 'no-cache', 'reload' and 'no-store' skip the client's cache (and refresh it); the others use it. */
  cache?: CacheMode;
  /** Send the request without the Authorization header. */
  noAuth?: boolean;
}

/** The spec's login request fields, common to every way of signing in. */
export interface LoginRequest {
  readonly clientId?: string;
  readonly codeChallenge?: string;
  readonly codeChallengeMethod?: 'plain' | 'S256';
  readonly googleClientId?: string;
  readonly launch?: string;
  readonly nonce?: string;
  readonly projectId?: string;
  readonly redirectUri?: string;
  readonly resourceType?: string;
  readonly scope?: string;
}

/** The spec's email/password login request. */
export interface EmailPasswordLoginRequest extends LoginRequest {
  readonly email: string;
  readonly password: string;
  readonly remember?: boolean;
}

/** What POST /auth/login (and /auth/profile, /auth/mfa/*) answers: the next step of a sign-in. */
export interface LoginAuthenticationResponse {
  readonly login: string;
  /** Present when the sign-in is done: exchange it at the token endpoint. */
  readonly code?: string;
  /** Present when the user has several memberships and must choose one (POST /auth/profile). */
  readonly memberships?: ProjectMembership[];
  /** Present when a second factor is due (POST /auth/mfa/verify). */
  readonly mfaRequired?: boolean;
  /** Present when the user must enrol a second factor first (POST /auth/mfa/login-enroll). */
  readonly mfaEnrollRequired?: boolean;
  /** The key to enrol: an otpauth://totp/ URI for an authenticator app. */
  readonly enrollUri?: string;
  /** The same key as a QR code image (a data: URL), for an <img>. */
  readonly enrollQrCode?: string;
}

/** The spec's token response (RFC 6749 §5.1 plus the project and profile). */
export interface TokenResponse {
  readonly token_type: string;
  readonly access_token: string;
  readonly expires_in?: number;
  readonly id_token?: string;
  readonly refresh_token?: string;
  readonly scope?: string;
  readonly project?: Reference<Project>;
  readonly profile?: Reference<ProfileResource>;
}

/** How signInWithPassword goes on when the user must choose or prove something. */
export interface SignInOptions {
  /**
   * Picks the membership to sign in with when the user has several. Without it, a sign-in that
   * needs a choice fails with a 'bad-request' outcome naming the memberships.
   */
  chooseMembership?: (
    memberships: ProjectMembership[],
  ) => ProjectMembership | string | Promise<ProjectMembership | string>;
  /**
   * Supplies the current TOTP code when a second factor is due. When the user must enrol first
   * (`enroll`), the key to add to an authenticator app comes as `enrollUri` (otpauth://) and as a
   * QR code image (`enrollQrCode`, a data: URL).
   */
  getMfaCode?: (step: {
    login: string;
    enroll: boolean;
    enrollUri?: string;
    enrollQrCode?: string;
  }) => string | Promise<string>;
}

/** The parts of a signed-in session the client keeps in storage. */
export interface LoginState {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Epoch ms when the access token expires, when known. */
  readonly expiresAt?: number;
  /** Epoch ms when the access token was received. */
  readonly issuedAt?: number;
  readonly project?: Reference<Project>;
  readonly profile?: Reference<ProfileResource>;
}

/** GET /auth/me: who the session is. */
export interface SessionDetails {
  readonly user?: Record<string, unknown> & { resourceType: string; id?: string };
  readonly project?: Project;
  readonly membership?: ProjectMembership;
  readonly profile?: ProfileResource;
  readonly config?: unknown;
  readonly accessPolicy?: unknown;
  readonly security?: unknown;
}

/** Options of the browser redirect sign-in (/oauth2/authorize with PKCE). */
export interface AuthorizeOptions {
  /** Where the server sends the browser back with `code` and `state`. Default: the current page. */
  redirectUri?: string;
  /** Default 'openid'. */
  scope?: string;
  launch?: string;
  nonce?: string;
  /** Extra query parameters for the authorization request. */
  params?: Record<string, string>;
}

/** Progress of an upload. A browser ProgressEvent has this shape. */
export interface UploadProgress {
  readonly loaded: number;
  readonly total: number;
  readonly lengthComputable: boolean;
}

/** The bytes of a Binary: text, a Blob or File, or raw bytes. */
export type BinarySource = string | Blob | ArrayBuffer | ArrayBufferView;

/** The spec's binary creation options. */
export interface CreateBinaryOptions {
  readonly contentType: string;
  readonly data: BinarySource;
  readonly filename?: string;
  /** Called as the body is sent. */
  readonly onProgress?: (e: UploadProgress) => void;
  /** The resource whose access rules apply to the Binary (sent as X-Security-Context). */
  readonly securityContext?: Reference;
}

/** The spec's JSON Patch operation (RFC 6902). */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'copy' | 'move' | 'test';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

/** The spec's ValueSet/$expand parameters (hl7.org/fhir/R4/valueset-operation-expand.html). */
export interface ValueSetExpandParams {
  readonly url?: string;
  readonly filter?: string;
  readonly date?: string;
  readonly offset?: number;
  readonly count?: number;
}

/** Appointment/$find's parameters (docs/scheduling.md): references as 'Type/id', dates as FHIR dates or dateTimes. */
export interface FindSlotsParams {
  readonly start: string;
  readonly end: string;
  readonly practitioner?: string;
  readonly location?: string;
  readonly 'healthcare-service'?: string;
  readonly 'service-type'?: string;
  readonly schedule?: string;
  readonly patient?: string;
  readonly _count?: number;
}

/**
 * Inputs of Measure/$evaluate-measure (hl7.org/fhir/R4/measure-operation-evaluate-measure.html).
 * Without `subject`, every patient the caller may read is evaluated.
 */
export interface EvaluateMeasureParams {
  /** Start of the measurement period: a date (its whole day) or a dateTime, e.g. '2019-01-01'. */
  readonly periodStart: string;
  /** End of the measurement period, inclusive: '2019-12-31' ends at 23:59:59.999 that day. */
  readonly periodEnd: string;
  /** 'Patient/{id}' or 'Group/{id}'. */
  readonly subject?: string;
  /**
   * individual (R4: subject) for one patient, subject-list (with the patients of each population),
   * summary (R4: population). Default: individual with a Patient subject, summary otherwise.
   */
  readonly reportType?: 'individual' | 'subject-list' | 'summary' | 'subject' | 'population';
  /** Store the MeasureReport (sent as POST); it resolves with its id. */
  readonly persist?: boolean;
}

/** The spec's bot event: what a bot's handler receives. */
export interface BotEvent<T = unknown> {
  readonly bot: Reference<Bot>;
  readonly contentType: string;
  readonly input: T;
  readonly secrets: Record<string, unknown>;
  readonly traceId?: string;
}

/** A bot to execute: its id, or an identifier of it. */
export type BotIdentifier = string | Identifier;

/** POST /admin/projects/{projectId}/invite. */
export interface InviteRequest {
  readonly resourceType: 'Patient' | 'Practitioner' | 'RelatedPerson';
  readonly firstName: string;
  readonly lastName: string;
  readonly email?: string;
  readonly externalId?: string;
  readonly sendEmail?: boolean;
  readonly password?: string;
  readonly membership?: Partial<ProjectMembership>;
  readonly scope?: 'project' | 'server';
}

/** POST /admin/projects/{projectId}/members/{id}: fields left out stay as they are. */
export interface ProjectMemberUpdate {
  readonly id: string;
  readonly admin?: boolean;
  readonly active?: boolean;
  /** null removes the membership's policy. */
  readonly accessPolicy?: Reference | null;
  readonly access?: ProjectMembership['access'];
  /** Only the profile's label can change; its reference stays. */
  readonly profile?: { readonly display?: string };
  readonly userName?: string;
  readonly externalId?: string;
}

/** POST /admin/projects/{projectId}/client. */
export interface CreateClientApplicationRequest {
  readonly name: string;
  readonly description?: string;
  readonly redirectUri?: string;
  /** Where the client publishes the keys of its client_assertion JWTs. */
  readonly jwksUri?: string;
  readonly accessPolicy?: Reference;
}

/** POST /admin/projects/{projectId}/bot. */
export interface CreateBotRequest {
  readonly name: string;
  readonly description?: string;
  readonly runtimeVersion?: string;
  readonly accessPolicy?: Reference;
}

/** A GraphQL answer (spec.graphql.org, Response). */
export interface GraphQLResponse<T = Record<string, unknown>> {
  readonly data?: T;
  readonly errors?: { message: string; path?: (string | number)[]; locations?: unknown[] }[];
}
