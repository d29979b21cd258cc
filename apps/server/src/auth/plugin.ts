import type { FastifyInstance } from 'fastify';
import type { AuthModule } from './module.js';
import { loginRoutes } from './http/login-routes.js';
import { oauth2Routes } from './http/oauth2-routes.js';
import { wellKnownRoutes } from './http/well-known.js';
import { authorizeRoutes } from './http/authorize.js';
import { mfaRoutes } from './http/mfa-routes.js';
import { passwordRoutes } from './http/password-routes.js';
import { registerRoutes } from './http/register-routes.js';
import { sessionRoutes } from './http/session-routes.js';
import { externalRoutes } from './http/external-routes.js';

export interface AuthPluginOptions {
  auth: AuthModule;
  /** The FHIR base path under this prefix ('/fhir/R4'), for SMART discovery beside it. */
  fhirPrefix: string;
}

/** Sign-in, OAuth 2.0 / OpenID Connect and discovery endpoints (CONTRACTS.md). */
export async function authPlugin(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const { auth } = options;
  await loginRoutes(app, auth);
  await oauth2Routes(app, auth);
  await wellKnownRoutes(app, auth, options.fhirPrefix);
  await authorizeRoutes(app, auth);
  await registerRoutes(app, auth);
  await passwordRoutes(app, auth);
  await mfaRoutes(app, auth);
  await sessionRoutes(app, auth);
  await externalRoutes(app, auth);
}
