import type { ProjectSetting, Reference, Resource } from '@hearth/core';

/**
 * The platform resources auth reads and writes, with the field names of the platform the spec
 * describes (packages/definitions holds their StructureDefinitions). Only the fields used here.
 */
export interface Project extends Resource {
  resourceType: 'Project';
  name?: string;
  description?: string;
  superAdmin?: boolean;
  strictMode?: boolean;
  owner?: Reference;
  features?: string[];
  active?: boolean;
  defaultPatientAccessPolicy?: Reference;
  setting?: ProjectSetting[];
  secret?: ProjectSetting[];
  systemSetting?: ProjectSetting[];
  systemSecret?: ProjectSetting[];
  site?: { name: string; domain: string[]; googleClientId?: string; recaptchaSiteKey?: string }[];
  link?: { project: Reference }[];
}

export interface User extends Resource {
  resourceType: 'User';
  firstName: string;
  lastName: string;
  externalId?: string;
  email?: string;
  emailVerified?: boolean;
  admin?: boolean;
  passwordHash?: string;
  mfaSecret?: string;
  mfaRequired?: boolean;
  mfaEnrolled?: boolean;
  /** Set for a project-scoped user; server-scoped users have none. */
  project?: Reference;
}

export interface AccessParameter {
  name: string;
  valueString?: string;
  valueReference?: Reference;
}

export interface ProjectMembership extends Resource {
  resourceType: 'ProjectMembership';
  active?: boolean;
  project: Reference;
  invitedBy?: Reference;
  user: Reference;
  profile: Reference;
  userName?: string;
  externalId?: string;
  accessPolicy?: Reference;
  access?: { policy: Reference; parameter?: AccessParameter[] }[];
  userConfiguration?: Reference;
  admin?: boolean;
}

export interface IdentityProviderConfig {
  /** OpenID Connect issuer: discovery, ID token keys and `iss` come from it. */
  issuer?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  tokenAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  userInfoUrl?: string;
  clientId?: string;
  clientSecret?: string;
  usePkce?: boolean;
  useSubject?: boolean;
}

export interface ClientApplication extends Resource {
  resourceType: 'ClientApplication';
  status?: string;
  name?: string;
  description?: string;
  secret?: string;
  retiringSecret?: string;
  jwksUri?: string;
  redirectUri?: string;
  redirectUris?: string[];
  launchUri?: string;
  pkceOptional?: boolean;
  identityProvider?: IdentityProviderConfig;
  accessTokenLifetime?: string;
  refreshTokenLifetime?: string;
  allowedOrigin?: string[];
  defaultScope?: string[];
}

export interface Login extends Resource {
  resourceType: 'Login';
  client?: Reference;
  profileType?: string;
  project?: Reference;
  user: Reference;
  membership?: Reference;
  scope?: string;
  authMethod: 'password' | 'google' | 'external' | 'client' | 'exchange' | 'execute';
  authTime: string;
  code?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'plain' | 'S256';
  refreshSecret?: string;
  nonce?: string;
  mfaVerified?: boolean;
  granted?: boolean;
  revoked?: boolean;
  admin?: boolean;
  superAdmin?: boolean;
  launch?: Reference;
  /** The redirect URI the authorization code was issued for (RFC 6749 §4.1.3). */
  redirectUri?: string;
  remember?: boolean;
  remoteAddress?: string;
  userAgent?: string;
  expiresAt?: string;
  extension?: { url: string; valueUri?: string; valueBoolean?: boolean; valueString?: string; valueInstant?: string }[];
}

/** What /auth/login (and every step after it) answers. */
export interface LoginResponse {
  login: string;
  code?: string;
  memberships?: ProjectMembership[];
  mfaRequired?: boolean;
  mfaEnrollRequired?: boolean;
  /** The otpauth:// URI to enrol with. */
  enrollUri?: string;
  /** The same URI as a QR code image (PNG data URL). */
  enrollQrCode?: string;
}

export interface AccessPolicyResourceRule {
  resourceType: string;
  compartment?: Reference;
  criteria?: string;
  readonly?: boolean;
  interaction?: AccessInteraction[];
  hiddenFields?: string[];
  readonlyFields?: string[];
}

export interface AccessPolicy extends Resource {
  resourceType: 'AccessPolicy';
  name?: string;
  basedOn?: Reference[];
  compartment?: Reference;
  resource?: AccessPolicyResourceRule[];
  ipAccessRule?: { name?: string; value: string; action: 'allow' | 'block' }[];
}

export type AccessInteraction = 'create' | 'read' | 'update' | 'delete' | 'search' | 'history' | 'vread';

export interface SmartAppLaunch extends Resource {
  resourceType: 'SmartAppLaunch';
  patient?: Reference;
  encounter?: Reference;
}

export interface UserSecurityRequest extends Resource {
  resourceType: 'UserSecurityRequest';
  type?: 'invite' | 'reset' | 'verify-email';
  user: Reference;
  secret: string;
  used?: boolean;
  expiresAt?: string;
  redirectUri?: string;
}

export interface DomainConfiguration extends Resource {
  resourceType: 'DomainConfiguration';
  domain: string;
  identityProvider?: IdentityProviderConfig;
}

/** The resource types a membership's profile may be. */
export const PROFILE_TYPES = ['Patient', 'Practitioner', 'RelatedPerson', 'ClientApplication', 'Bot'] as const;

/**
 * Extensions on Login holding the refresh secret a rotation replaced and when: a reused old
 * refresh token is told apart from a forged one, and a client's own concurrent refresh from theft.
 */
export const PREVIOUS_REFRESH_SECRET_EXTENSION =
  'https://hearth.dev/fhir/StructureDefinition/login-previous-refresh-secret';
export const REFRESH_ROTATED_AT_EXTENSION = 'https://hearth.dev/fhir/StructureDefinition/login-refresh-rotated-at';

/**
 * Extension on Login (valueString): the SMART launch context the user chose while signing in,
 * `patient` once the patient picker answered, `encounter` once the encounter picker did ("No
 * encounter" too). A Login with a launch but without it came from an EHR launch.
 */
export const CHOSEN_CONTEXT_EXTENSION = 'https://hearth.dev/fhir/StructureDefinition/login-chosen-context';

export function loginExtension(login: Login, url: string): string | undefined {
  const e = login.extension?.find((x) => x.url === url);
  return e?.valueString ?? e?.valueUri;
}
