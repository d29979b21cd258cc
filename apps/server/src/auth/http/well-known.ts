import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuthModule } from '../module.js';

const SCOPES = [
  'openid',
  'profile',
  'email',
  'fhirUser',
  'offline_access',
  'online_access',
  'launch',
  'launch/patient',
  'launch/encounter',
  'patient/*.rs',
  'user/*.cruds',
  'system/*.cruds',
  'patient/*.read',
  'user/*.*',
  'system/*.*',
  'fhircast/*.read',
  'fhircast/*.write',
];

/** OpenID Connect discovery, JWKS and SMART App Launch 2.0 discovery (hl7.org/fhir/smart-app-launch/conformance.html). */
export async function wellKnownRoutes(app: FastifyInstance, auth: AuthModule, fhirPrefix: string): Promise<void> {
  const base = auth.deps.config.baseUrl;
  const alg = auth.deps.config.signingAlgorithm;
  const endpoints = {
    issuer: base,
    authorization_endpoint: `${base}oauth2/authorize`,
    token_endpoint: `${base}oauth2/token`,
    userinfo_endpoint: `${base}oauth2/userinfo`,
    jwks_uri: `${base}.well-known/jwks.json`,
    end_session_endpoint: `${base}oauth2/logout`,
    introspection_endpoint: `${base}oauth2/introspect`,
    registration_endpoint: `${base}oauth2/register`,
  };
  const authMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];
  const grants = [
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'urn:ietf:params:oauth:grant-type:token-exchange',
  ];

  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(auth.keys.publicKeys()),
  );

  app.get('/.well-known/openid-configuration', async (_request, reply) =>
    reply.send({
      ...endpoints,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [alg],
      scopes_supported: SCOPES,
      token_endpoint_auth_methods_supported: authMethods,
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES384', 'RS256', 'RS384'],
      grant_types_supported: grants,
      code_challenge_methods_supported: ['S256', 'plain'],
      claims_supported: [
        'sub',
        'iss',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'fhirUser',
        'name',
        'given_name',
        'family_name',
        'email',
        'email_verified',
      ],
    }),
  );

  const smart = async (_request: unknown, reply: FastifyReply) =>
    reply.send({
      ...endpoints,
      grant_types_supported: grants,
      token_endpoint_auth_methods_supported: authMethods,
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES384', 'RS256', 'RS384'],
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      capabilities: [
        'launch-ehr',
        'launch-standalone',
        'authorize-post',
        'client-public',
        'client-confidential-symmetric',
        'client-confidential-asymmetric',
        'context-passthrough-banner',
        'context-ehr-patient',
        'context-ehr-encounter',
        'context-standalone-patient',
        'context-standalone-encounter',
        'permission-offline',
        'permission-online',
        'permission-patient',
        'permission-user',
        'permission-v1',
        'permission-v2',
        'sso-openid-connect',
      ],
    });
  app.get('/.well-known/smart-configuration', smart);
  app.get(`${fhirPrefix}/.well-known/smart-configuration`, smart);
  app.get(`${fhirPrefix}/.well-known/openid-configuration`, async (_request, reply) =>
    reply.redirect(`${base}.well-known/openid-configuration`),
  );
}
