/**
 * hearth login | logout | whoami. Three ways to sign in (CONTRACTS.md, Sign-in flow): the browser
 * (authorization code with PKCE and a loopback redirect), client credentials, and email and
 * password through /auth/login for scripts.
 */
import type { Command } from 'commander';
import { getDisplayString, type ProjectMembership } from '@hearth/core';
import {
  baseUrlOf,
  CliClient,
  connect,
  normalizeBaseUrl,
  profileNameOf,
  type Connection,
  type GlobalOptions,
} from '../client.js';
import { CliError, info, printJson } from '../output.js';
import { deleteProfile, loadProfile, ProfileStorage, saveProfile, type AuthMethod, type Profile } from '../profiles.js';
import { ask, askHidden, isInteractive } from '../prompt.js';
import { openBrowser, startCallbackServer, timeout } from './callback.js';

interface LoginOptions extends GlobalOptions {
  clientId?: string;
  clientSecret?: string;
  email?: string;
  password?: string;
  mfaCode?: string;
  project?: string;
  port: string;
  redirectUri?: string;
  scope?: string;
  browser: boolean;
  timeout: string;
}

export const DEFAULT_CALLBACK_PORT = 9615;

export function registerAuthCommands(program: Command): void {
  program
    .command('login')
    .summary('Sign in (browser, client credentials, or email and password) and store the session')
    .description(
      'Sign in and store the session in a profile (~/.hearth/profiles/<profile>.json).\n' +
        'Without --email or --client-secret: in the browser, through a callback on 127.0.0.1\n' +
        '(the client application must list http://127.0.0.1:<port>/callback as a redirect URI).',
    )
    .option('--client-id <id>', 'client application id (env HEARTH_CLIENT_ID)')
    .option('--client-secret <secret>', 'client credentials: the client secret (env HEARTH_CLIENT_SECRET)')
    .option('--email <email>', 'email and password sign-in (for scripts)')
    .option('--password <password>', 'the password (env HEARTH_PASSWORD; asked for on a terminal)')
    .option(
      '--mfa-code <code>',
      'the authenticator (TOTP) code, when the account has a second factor (env HEARTH_MFA_CODE)',
    )
    .option('--project <id>', 'the project to sign in to, when the user has several')
    .option('--port <port>', 'browser sign-in: the callback port', String(DEFAULT_CALLBACK_PORT))
    .option('--redirect-uri <uri>', 'browser sign-in: the callback URI (default http://127.0.0.1:<port>/callback)')
    .option('--scope <scope>', 'browser sign-in: the scope to ask for', 'openid offline_access')
    .option('--no-browser', 'browser sign-in: print the URL without opening a browser')
    .option('--timeout <seconds>', 'browser sign-in: how long to wait for the redirect', '300')
    .action(async (_options, command: Command) => login(command.optsWithGlobals<LoginOptions>()));

  program
    .command('logout')
    .description("Sign out of the profile's active project (the server revokes the session)")
    .option('--all', 'sign out of every project of the profile and delete the profile')
    .action(async (options: { all?: boolean }, command: Command) =>
      logout(command.optsWithGlobals<GlobalOptions>(), !!options.all),
    );

  program
    .command('whoami')
    .description('Who the session is: server, user, profile resource, project, membership')
    .option('--json', 'print the /auth/me answer as JSON')
    .action(async (options: { json?: boolean }, command: Command) =>
      whoami(await connect(command.optsWithGlobals<GlobalOptions>()), !!options.json),
    );
}

function methodOf(options: LoginOptions, clientId?: string, clientSecret?: string): AuthMethod {
  if (options.email) {
    return 'password';
  }
  if (clientId && clientSecret) {
    return 'client-credentials';
  }
  return 'authorization-code';
}

async function login(options: LoginOptions): Promise<void> {
  const profileName = profileNameOf(options);
  const existing = loadProfile(profileName);
  const baseUrl = baseUrlOf(options, existing);
  const sameServer = existing !== undefined && normalizeBaseUrl(existing.baseUrl) === baseUrl;
  const clientId = options.clientId ?? process.env.HEARTH_CLIENT_ID ?? (sameServer ? existing?.clientId : undefined);
  const clientSecret = options.clientSecret ?? process.env.HEARTH_CLIENT_SECRET;
  const method = methodOf(options, clientId, clientSecret);
  // Another server: the profile starts over (its logins are of the other server).
  const profile: Profile = sameServer && existing ? existing : { name: profileName, baseUrl, logins: {} };
  profile.baseUrl = baseUrl;
  const storage = new ProfileStorage(profile);
  const hearth = new CliClient({ baseUrl, clientId, storage, cacheTime: 0 });
  try {
    switch (method) {
      case 'client-credentials':
        await hearth.signInWithClientCredentials(clientId as string, clientSecret as string);
        break;
      case 'password':
        await passwordSignIn(hearth, profile, options);
        break;
      default:
        await browserSignIn(hearth, options, clientId);
    }
  } catch (err) {
    // A failed sign-in leaves no trace: no pending redirect state, no new empty profile.
    if (profile.storage?.pendingAuthorize) {
      storage.removeItem('pendingAuthorize');
    }
    if (!existing && Object.keys(profile.logins).length === 0) {
      deleteProfile(profileName);
    }
    throw err;
  }
  profile.authMethod = method;
  profile.clientId = clientId;
  if (method === 'client-credentials') {
    profile.clientSecret = clientSecret;
  } else {
    delete profile.clientSecret;
  }
  saveProfile(profile);
  const details = await hearth.getSessionDetails();
  const account = (details?.user?.email as string | undefined) ?? getDisplayString(details?.user as never) ?? undefined;
  storage.describeActiveLogin({
    projectName: details?.project?.name,
    profileDisplay: details?.profile ? getDisplayString(details.profile as never) : undefined,
    membershipId: details?.membership?.id,
    account,
  });
  const projectRef = hearth.getProject()?.reference ?? (details?.project ? `Project/${details.project.id}` : '');
  const who = details?.profile
    ? `${getDisplayString(details.profile as never)} (${details.profile.resourceType}/${details.profile.id})`
    : 'unknown';
  console.log(
    `Signed in to ${baseUrl} as ${who} in project ${details?.project?.name ?? ''} (${projectRef}); profile '${profileName}'`,
  );
}

async function passwordSignIn(hearth: CliClient, profile: Profile, options: LoginOptions): Promise<void> {
  const email = options.email as string;
  let password = options.password ?? process.env.HEARTH_PASSWORD;
  if (!password) {
    if (!isInteractive()) {
      throw new CliError('No password: pass --password or set HEARTH_PASSWORD');
    }
    password = await askHidden(`Password for ${email}: `);
  }
  await hearth.signInWithPassword(
    { email, password, projectId: options.project },
    {
      chooseMembership: async (memberships) => {
        profile.memberships = memberships.map((m) => ({ id: m.id as string, project: m.project, profile: m.profile }));
        return chooseMembership(memberships, options.project);
      },
      // The key as an otpauth:// URI (older servers sent it as enrollQrCode; now that is an image).
      getMfaCode: ({ enroll, enrollUri, enrollQrCode }) =>
        secondFactor(
          options.mfaCode ?? process.env.HEARTH_MFA_CODE,
          enroll,
          enrollUri ?? (enrollQrCode?.startsWith('otpauth:') ? enrollQrCode : undefined),
        ),
    },
  );
}

/**
 * The TOTP code of a sign-in: the one given, else asked for on a terminal. An account that must
 * enrol first is shown its key (an otpauth:// URI for an authenticator app; the same on each try).
 */
async function secondFactor(
  given: string | undefined,
  enroll: boolean,
  enrollUri: string | undefined,
): Promise<string> {
  if (enroll && !given) {
    const key = `Add this key to an authenticator app (it is the same on every attempt):\n  ${enrollUri ?? ''}`;
    if (!isInteractive()) {
      throw new CliError(`This account must set up a second factor. ${key}\nthen sign in again with --mfa-code <code>`);
    }
    info(key);
  }
  if (given) {
    return given.trim();
  }
  if (!isInteractive()) {
    throw new CliError(
      'This account has a second factor: pass the authenticator code with --mfa-code or HEARTH_MFA_CODE',
    );
  }
  return ask('Authenticator code: ');
}

/** Which membership to sign in with: the one of --project, else the user's choice on a terminal. */
async function chooseMembership(memberships: ProjectMembership[], project?: string): Promise<string> {
  const label = (m: ProjectMembership) =>
    `${m.project?.display ?? ''} (${m.project?.reference ?? ''}) as ${m.profile?.display ?? m.profile?.reference ?? ''}`;
  if (project) {
    const chosen = memberships.find((m) => m.project?.reference === `Project/${project}` || m.id === project);
    if (!chosen) {
      throw new CliError(`No membership in project ${project}; the user has: ${memberships.map(label).join('; ')}`);
    }
    return chosen.id as string;
  }
  if (!isInteractive()) {
    const list = memberships.map((m) => `  ${m.project?.reference?.replace('Project/', '')}  ${label(m)}`).join('\n');
    throw new CliError(`The user is in ${memberships.length} projects: choose one with --project <id>:\n${list}`);
  }
  memberships.forEach((m, i) => info(`  ${i + 1}) ${label(m)}`));
  const answer = await ask(`Project [1-${memberships.length}]: `);
  const chosen = memberships[Number(answer) - 1];
  if (!chosen) {
    throw new CliError(`No such choice: ${answer}`);
  }
  return chosen.id as string;
}

async function browserSignIn(hearth: CliClient, options: LoginOptions, clientId: string | undefined): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`Invalid --port ${options.port}`);
  }
  const redirectUri = new URL(options.redirectUri ?? `http://127.0.0.1:${port}/callback`);
  if (!clientId) {
    throw new CliError(
      'The browser sign-in needs a client application: pass --client-id <id> (or set HEARTH_CLIENT_ID) of a client ' +
        `whose redirect URIs include ${redirectUri}; or sign in with --email, or with --client-id and --client-secret`,
    );
  }
  let state: string | undefined;
  const callback = await startCallbackServer(redirectUri, () => state);
  const limit = timeout(Number(options.timeout) * 1000, 'Timed out waiting for the browser sign-in');
  try {
    const url = await hearth.getAuthorizeUrl({ redirectUri: redirectUri.toString(), scope: options.scope });
    state = new URL(url).searchParams.get('state') ?? undefined;
    info(
      `Open this URL in a browser to sign in:\n\n  ${url}\n\nWaiting for the sign-in to finish (on ${redirectUri})...`,
    );
    if (options.browser) {
      openBrowser(url);
    }
    const { code } = await Promise.race([callback.result, limit.promise]);
    await hearth.processCode(code, { state });
  } finally {
    limit.cancel();
    await callback.close();
  }
}

async function logout(options: GlobalOptions, all: boolean): Promise<void> {
  const connection = await connect(options, false);
  if (connection.source === 'access-token' || connection.source === 'client-credentials-env') {
    info('The session comes from environment variables (HEARTH_ACCESS_TOKEN / HEARTH_CLIENT_ID): nothing is stored');
    return;
  }
  const profile = connection.profile;
  if (!profile) {
    info(`Profile '${connection.profileName}' does not exist: nothing to sign out of`);
    return;
  }
  const projects = all
    ? Object.keys(profile.logins)
    : profile.activeProject !== undefined
      ? [profile.activeProject]
      : [];
  for (const project of projects) {
    profile.activeProject = project;
    const storage = new ProfileStorage(profile);
    const hearth = new CliClient({ baseUrl: profile.baseUrl, clientId: profile.clientId, storage, cacheTime: 0 });
    await hearth.signOut();
    console.log(`Signed out of ${profile.baseUrl} ${project || '(no project)'}; profile '${profile.name}'`);
  }
  if (all) {
    deleteProfile(profile.name);
    console.log(`Deleted profile '${profile.name}'`);
  } else if (projects.length === 0) {
    info(`Profile '${profile.name}' has no active login`);
  }
}

function describeExpiry(expiresAt: number | undefined): string {
  if (expiresAt === undefined) {
    return 'unknown';
  }
  const minutes = Math.round((expiresAt - Date.now()) / 60_000);
  return `${new Date(expiresAt).toISOString()} (${minutes >= 0 ? `in ${minutes} min` : 'expired'})`;
}

async function whoami(connection: Connection, json: boolean): Promise<void> {
  const { hearth } = connection;
  const details = await hearth.getSessionDetails();
  if (json) {
    printJson(details);
    return;
  }
  const user = details?.user;
  const profile = details?.profile;
  const membership = details?.membership;
  const sources: Record<string, string> = {
    'access-token': 'HEARTH_ACCESS_TOKEN',
    'client-credentials-env': 'HEARTH_CLIENT_ID / HEARTH_CLIENT_SECRET',
    profile: `profile '${connection.profileName}' (${connection.profile?.authMethod ?? 'stored login'})`,
  };
  const rows: [string, string][] = [
    ['Server', hearth.getBaseUrl()],
    ['Session', sources[connection.source] ?? connection.source],
    ['User', user ? `${getDisplayString(user as never)} (${user.resourceType}/${user.id})` : ''],
    ['Profile', profile ? `${getDisplayString(profile as never)} (${profile.resourceType}/${profile.id})` : ''],
    ['Project', details?.project ? `${details.project.name ?? ''} (Project/${details.project.id})` : ''],
    ['Membership', membership ? `ProjectMembership/${membership.id}${membership.admin ? ' (project admin)' : ''}` : ''],
    ['Token expires', describeExpiry(hearth.getActiveLogin()?.expiresAt)],
  ];
  if (connection.profile && connection.source === 'profile') {
    rows.splice(2, 0, ['Stored logins', String(Object.keys(connection.profile.logins).length)]);
  }
  for (const [name, value] of rows) {
    console.log(`${`${name}:`.padEnd(15)}${value}`);
  }
}
