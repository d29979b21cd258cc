import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, fail, forbiddenWith, isValidId, OperationOutcomeError, type Resource } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { assertNotLocked } from '../brute-force.js';
import { checkPasswordSignIn } from '../password-sign-in.js';
import {
  chooseMembershipById,
  loadClient,
  readPendingLogin,
  registeredRedirectUris,
  startLogin,
  type LoginParams,
} from '../login-flow.js';
import { readByReference } from '../store.js';
import type { ClientApplication, Login, LoginResponse, Project, User } from '../types.js';
import { requestInfo } from './common.js';
import {
  CARRIED,
  displayName,
  escapeHtml,
  fieldsOf,
  hidden,
  page,
  redirectWith,
  sendHtml,
  type Fields,
  type HumanName,
} from './pages.js';
import { needsEncounterPick, needsPatientPick, withChosenContext } from '../launch-pick.js';
import { encounterPicker } from './encounter-picker.js';
import { searchAsMember } from './member-search.js';
import { nextStep } from '../login-flow.js';
import { verifySignInFactor } from '../mfa.js';

/** The browser flow of RFC 6749 §4.1 with a server-rendered sign-in page, SMART standalone and EHR launch. */
export async function authorizeRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;
  const fhirBase = `${deps.config.baseUrl}fhir/R4`;
  // Forms post to absolute paths: the pages are served at /oauth2/authorize and at its sub-paths.
  const actions = `${new URL(deps.config.baseUrl).pathname}oauth2/authorize`;
  const encounters = encounterPicker(auth, fhirBase, actions);

  /**
   * Checks the authorization request. Problems with the client or redirect URI are shown here,
   * never redirected (RFC 6749 §4.1.2.1); the others go back to the client as error redirects.
   */
  async function validate(fields: Fields, reply: FastifyReply): Promise<{ client: ClientApplication } | FastifyReply> {
    let client: ClientApplication | undefined;
    try {
      client = await loadClient(deps, fields.client_id);
    } catch {
      client = undefined;
    }
    if (!client) {
      return sendHtml(
        reply,
        400,
        page('Sign-in error', '<h1>Unknown client</h1><p class="error">The application is not registered.</p>'),
      );
    }
    const redirect = fields.redirect_uri;
    if (!redirect || !registeredRedirectUris(client).includes(redirect)) {
      return sendHtml(
        reply,
        400,
        page(
          'Sign-in error',
          '<h1>Invalid redirect URI</h1><p class="error">redirect_uri does not match a redirect URI registered for this application.</p>',
        ),
      );
    }
    const refuse = (error: string, description: string) =>
      redirectWith(reply, redirect, { error, error_description: description, state: fields.state });
    if (fields.response_type !== 'code') {
      return refuse('unsupported_response_type', 'response_type must be code');
    }
    if (!fields.code_challenge && !client.pkceOptional) {
      return refuse('invalid_request', 'code_challenge is required (PKCE)');
    }
    if (
      fields.code_challenge &&
      fields.code_challenge_method &&
      !['S256', 'plain'].includes(fields.code_challenge_method)
    ) {
      return refuse('invalid_request', 'code_challenge_method must be S256 or plain');
    }
    if (
      fields.aud &&
      fields.aud.replace(/\/$/, '') !== fhirBase &&
      fields.aud.replace(/\/$/, '') !== `${deps.config.baseUrl}api/fhir/R4`
    ) {
      return refuse('invalid_request', `aud must be this server's FHIR base URL (${fhirBase})`);
    }
    if (fields.launch && !isValidId(fields.launch)) {
      return refuse('invalid_request', 'Unknown launch');
    }
    return { client };
  }

  function signInPage(client: ClientApplication, fields: Fields, error?: string): string {
    return page(
      'Sign in',
      `<h1>Sign in to ${escapeHtml(client.name ?? 'Hearth')}</h1>${error ? `<p class="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${actions}">${hidden(fields, CARRIED)}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(fields.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
    );
  }

  async function finish(
    reply: FastifyReply,
    fields: Fields,
    client: ClientApplication,
    result: LoginResponse,
  ): Promise<FastifyReply> {
    if (result.code) {
      const login = await readByReference<Login>(deps.pool, `Login/${result.login}`);
      if (login && needsPatientPick(login)) {
        return patientPicker(reply, fields, login);
      }
      if (login && needsEncounterPick(login)) {
        return encounters.show(reply, fields, login);
      }
      return redirectWith(reply, fields.redirect_uri as string, { code: result.code, state: fields.state });
    }
    if (result.mfaRequired) {
      return sendHtml(
        reply,
        200,
        page(
          'Verify',
          `<h1>Enter your authenticator code</h1><form method="post" action="${actions}/mfa">${hidden({ ...fields, login: result.login }, [...CARRIED, 'login'])}
<label for="token">Code</label><input id="token" name="token" type="text" inputmode="numeric" autocomplete="one-time-code" required><button type="submit">Verify</button></form>`,
        ),
        fields.redirect_uri,
      );
    }
    if (result.mfaEnrollRequired) {
      // Enrol on the way in: scan the code (or type the key), then give the first code.
      const secret = result.enrollUri ? (new URL(result.enrollUri).searchParams.get('secret') ?? '') : '';
      const qr = result.enrollQrCode
        ? `<p style="text-align:center"><img src="${escapeHtml(result.enrollQrCode)}" alt="Authenticator QR code" width="200" height="200"></p>`
        : '';
      return sendHtml(
        reply,
        200,
        page(
          'Set up a second factor',
          `<h1>Set up your authenticator</h1><p>A second factor is required. Scan the code with an authenticator app, or enter the key <code>${escapeHtml(secret)}</code>, then enter the code it shows.</p>${qr}
<form method="post" action="${actions}/mfa">${hidden({ ...fields, login: result.login, enroll: '1' }, [...CARRIED, 'login', 'enroll'])}
<label for="token">Code</label><input id="token" name="token" type="text" inputmode="numeric" autocomplete="one-time-code" required><button type="submit">Verify</button></form>`,
        ),
        fields.redirect_uri,
      );
    }
    const memberships = result.memberships ?? [];
    if (memberships.length === 0) {
      return redirectWith(reply, fields.redirect_uri as string, {
        error: 'access_denied',
        error_description: 'No project membership fits this application',
        state: fields.state,
      });
    }
    const projects = new Map<string, string>();
    for (const m of memberships) {
      const p = await readByReference<Project>(deps.pool, m.project.reference);
      projects.set(m.id as string, `${p?.name ?? 'Project'} — ${m.profile.display ?? m.profile.reference}`);
    }
    const choices = memberships
      .map(
        (m, i) =>
          `<label class="choice"><input type="radio" name="profile" value="${escapeHtml(m.id as string)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(projects.get(m.id as string) ?? '')}</label>`,
      )
      .join('');
    return sendHtml(
      reply,
      200,
      page(
        'Choose a profile',
        `<h1>Choose a profile</h1><form method="post" action="${actions}/profile">${hidden({ ...fields, login: result.login }, [...CARRIED, 'login'])}${choices}<button type="submit">Continue</button></form>`,
      ),
      fields.redirect_uri,
    );
  }

  const authorizeGet = async (request: FastifyRequest, reply: FastifyReply) => {
    const fields = fieldsOf(request);
    const checked = await validate(fields, reply);
    if (!('client' in checked)) {
      return checked;
    }
    return sendHtml(reply, 200, signInPage(checked.client, fields), fields.redirect_uri);
  };
  app.get('/oauth2/authorize', authorizeGet);

  // POST: the sign-in form (email and password present), or an authorization request sent as a form (SMART authorize-post).
  app.post('/oauth2/authorize', async (request, reply) => {
    const fields = fieldsOf(request);
    if (fields.email === undefined && fields.password === undefined) {
      return authorizeGet(request, reply);
    }
    const checked = await validate(fields, reply);
    if (!('client' in checked)) {
      return checked;
    }
    const { client } = checked;
    const email = (fields.email ?? '').trim().toLowerCase();
    const info = requestInfo(request);
    try {
      await assertNotLocked(deps, email);
    } catch (err) {
      return sendHtml(reply, 429, signInPage(client, fields, (err as Error).message), fields.redirect_uri);
    }
    const user = await checkPasswordSignIn(deps, {
      email,
      password: fields.password ?? '',
      method: 'authorize',
      info,
    });
    if (!user) {
      return sendHtml(reply, 400, signInPage(client, fields, 'Email or password is invalid'), fields.redirect_uri);
    }
    const params: LoginParams = {
      clientId: client.id,
      redirectUri: fields.redirect_uri,
      scope: fields.scope,
      nonce: fields.nonce,
      launch: fields.launch,
      codeChallenge: fields.code_challenge,
      codeChallengeMethod: fields.code_challenge ? (fields.code_challenge_method ?? 'plain') : undefined,
    };
    let result: LoginResponse;
    try {
      result = await startLogin(deps, { user: user as User, authMethod: 'password', params, client, info });
    } catch (err) {
      // A signed-in user the app may not have (disabled membership): the app hears it as access_denied.
      if (err instanceof OperationOutcomeError && err.status === 403) {
        return redirectWith(reply, fields.redirect_uri as string, {
          error: 'access_denied',
          error_description: err.outcome.issue[0]?.details?.text,
          state: fields.state,
        });
      }
      throw err;
    }
    return finish(reply, fields, client, result);
  });

  /**
   * SMART standalone launch with launch/patient (or launch/encounter) by a user who is not a patient: the server asks
   * which patient (App Launch 2.0, "patient picker"), among those the member may read.
   */
  async function patientPicker(reply: FastifyReply, fields: Fields, login: Login, query = ''): Promise<FastifyReply> {
    const member = await auth.authenticator.forMembership(login.membership?.reference as string);
    const params = new URLSearchParams({ _count: '20', _sort: 'family,given', _elements: 'name,birthDate' });
    if (query.trim()) {
      params.set('name', query.trim());
    }
    const bundle = await searchAsMember<{
      entry?: { resource: { id: string; name?: HumanName[]; birthDate?: string } }[];
    }>(auth, member, fhirBase, 'Patient', params);
    const patients = (bundle.entry ?? []).map((e) => e.resource);
    const carried = hidden({ ...fields, login: login.id }, [...CARRIED, 'login']);
    const choices = patients
      .map(
        (p, i) =>
          `<label class="choice"><input type="radio" name="patient" value="${escapeHtml(p.id)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(displayName(p.name))}${p.birthDate ? ` (${escapeHtml(p.birthDate)})` : ''}</label>`,
      )
      .join('');
    return sendHtml(
      reply,
      200,
      page(
        'Choose a patient',
        `<h1>Choose a patient</h1><form method="post" action="${actions}/patient">${carried}
<label for="q">Name</label><input id="q" name="q" type="text" value="${escapeHtml(query)}"><button type="submit">Search</button></form>
<form method="post" action="${actions}/patient">${carried}${choices || '<p class="error">No patients found.</p>'}${choices ? '<button type="submit">Continue</button>' : ''}</form>`,
      ),
      fields.redirect_uri,
    );
  }

  /**
   * The start of every later step of a sign-in (patient or encounter choice, profile choice, MFA): the carried
   * authorization request is valid again, and the pending login it names belongs to that client.
   */
  async function continuedSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<{ fields: Fields; login: Login; client: ClientApplication } | FastifyReply> {
    const fields = fieldsOf(request);
    const checked = await validate(fields, reply);
    if (!('client' in checked)) {
      return checked;
    }
    const login = await readPendingLogin(deps, fields.login);
    assertSameClient(login, checked.client);
    return { fields, login, client: checked.client };
  }

  app.post('/oauth2/authorize/patient', async (request, reply) => {
    const step = await continuedSignIn(request, reply);
    if (!('login' in step)) {
      return step;
    }
    const { fields, login } = step;
    if (!login.code || !needsPatientPick(login)) {
      fail(badRequest('This sign-in is not choosing a patient', 'login'));
    }
    if (!fields.patient) {
      return patientPicker(reply, fields, login, fields.q ?? '');
    }
    if (!isValidId(fields.patient)) {
      fail(badRequest('Invalid patient', 'patient'));
    }
    // Read as the member: a patient they may not see is not found.
    const member = await auth.authenticator.forMembership(login.membership?.reference as string);
    const patient = await auth.repoFor(member).readResource('Patient', fields.patient);
    const projectId = login.project?.reference?.replace(/^Project\//, '') as string;
    const launch = await deps.systemRepo(projectId).createResource({
      resourceType: 'SmartAppLaunch',
      patient: { reference: `Patient/${patient.resource.id}` },
    } as Resource);
    const picked = await deps.systemRepo().updateResource(withChosenContext(login, 'patient', launch.resource.id), {
      ifMatch: Number(login.meta?.versionId),
    });
    if (needsEncounterPick(picked.resource)) {
      return encounters.show(reply, fields, picked.resource);
    }
    return redirectWith(reply, fields.redirect_uri as string, { code: login.code, state: fields.state });
  });

  app.post('/oauth2/authorize/encounter', async (request, reply) => {
    const step = await continuedSignIn(request, reply);
    if (!('login' in step)) {
      return step;
    }
    const { fields, login } = step;
    if (!login.code || !needsEncounterPick(login)) {
      fail(badRequest('This sign-in is not choosing an encounter', 'login'));
    }
    if (fields.encounter === undefined) {
      return encounters.show(reply, fields, login);
    }
    await encounters.choose(login, fields.encounter);
    return redirectWith(reply, fields.redirect_uri as string, { code: login.code, state: fields.state });
  });

  app.post('/oauth2/authorize/profile', async (request, reply) => {
    const step = await continuedSignIn(request, reply);
    if (!('login' in step)) {
      return step;
    }
    const { fields, login, client } = step;
    return finish(reply, fields, client, await chooseMembershipById(deps, login, fields.profile));
  });

  app.post('/oauth2/authorize/mfa', async (request, reply) => {
    const step = await continuedSignIn(request, reply);
    if (!('login' in step)) {
      return step;
    }
    const { fields, login, client } = step;
    const user = await readByReference<User>(deps.pool, login.user.reference);
    if (!user) {
      fail(forbiddenWith('Login has no user'));
    }
    const enrol = fields.enroll === '1';
    const verified = await verifySignInFactor(deps, login, user, fields.token, enrol);
    const next = await nextStep(deps, verified, { ...user, mfaEnrolled: user.mfaEnrolled || enrol });
    return finish(reply, fields, client, next);
  });
}

function assertSameClient(login: Login, client: ClientApplication): void {
  if (login.client?.reference !== `ClientApplication/${client.id}`) {
    fail(forbiddenWith('Login belongs to another client'));
  }
}
