import type { AuthDeps } from './deps.js';
import { appBaseUrl } from './deps.js';
import { generatePassword, hashPassword } from './passwords.js';
import { createClient, createMembership, createProfile, createUser, normalizeEmail, referenceTo } from './projects.js';
import { findMembershipsOfUser, findUserByEmail } from './store.js';
import { getSetting, setSettingOnce } from '../storage/settings.js';

/** Any constant shared by every Hearth process: one process bootstraps, the others wait and reuse. */
const BOOTSTRAP_LOCK = 7_246_013_201;
const ADMIN_USER_KEY = 'superAdminUserId';
const DEFAULT_CLIENT_KEY = 'defaultClientId';

export interface BootstrapResult {
  adminUserId: string;
  defaultClientId: string;
  /** Set only in the process that created the super admin (and only when it made up the password). */
  generatedPassword?: string;
  created: boolean;
}

/**
 * First start: the super admin user (HEARTH_ADMIN_EMAIL / HEARTH_ADMIN_PASSWORD, or a generated
 * password printed once), its admin membership in the super admin project, and the default
 * client of the web app. Safe when several processes start at once: a session advisory lock
 * lets one do it; the others find the settings it wrote. Resumes a half-done first start.
 */
export async function bootstrapSuperAdmin(deps: AuthDeps, print: (text: string) => void): Promise<BootstrapResult> {
  const done = async (): Promise<BootstrapResult | undefined> => {
    const adminUserId = await getSetting(deps.pool, ADMIN_USER_KEY);
    const defaultClientId = await getSetting(deps.pool, DEFAULT_CLIENT_KEY);
    return adminUserId && defaultClientId ? { adminUserId, defaultClientId, created: false } : undefined;
  };
  const existing = await done();
  if (existing) {
    return existing;
  }
  const client = await deps.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [BOOTSTRAP_LOCK]);
    try {
      const again = await done();
      if (again) {
        return again;
      }
      return await createSuperAdmin(deps, print);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [BOOTSTRAP_LOCK]);
    }
  } finally {
    client.release();
  }
}

async function createSuperAdmin(deps: AuthDeps, print: (text: string) => void): Promise<BootstrapResult> {
  const { config, superAdminProjectId: projectId } = deps;
  const email = normalizeEmail(config.adminEmail, 'HEARTH_ADMIN_EMAIL');
  const generatedPassword = config.adminPassword ? undefined : generatePassword();
  const password = config.adminPassword || (generatedPassword as string);
  let user = await findUserByEmail(deps.pool, email);
  if (user) {
    // A first start that stopped half-way: take the user over with the password of this start.
    user = (await deps.systemRepo(projectId).updateResource({ ...user, passwordHash: await hashPassword(password) }))
      .resource;
  } else {
    user = await createUser(deps, { firstName: 'Super', lastName: 'Admin', email, password });
  }
  const memberships = await findMembershipsOfUser(deps.pool, `User/${user.id}`, projectId);
  if (memberships.length === 0) {
    const profile = await createProfile(deps, projectId, 'Practitioner', user.firstName, user.lastName, email);
    await createMembership(deps, projectId, {
      user: { reference: `User/${user.id}`, display: email },
      profile: referenceTo(profile),
      admin: true,
    });
  }
  const app = appBaseUrl(config);
  const { client } = await createClient(
    deps,
    projectId,
    {
      name: 'Hearth Web App',
      description: 'The default client: the web app and first-party sign-in',
      redirectUris: [app, `${app}signin`],
    },
    false,
  );
  await setSettingOnce(deps.pool, DEFAULT_CLIENT_KEY, client.id as string);
  await setSettingOnce(deps.pool, ADMIN_USER_KEY, user.id as string);
  const lines = [
    '',
    'Hearth is ready. Sign in as the super admin:',
    `  URL:      ${app}signin`,
    `  Email:    ${email}`,
    generatedPassword
      ? `  Password: ${generatedPassword}   (generated: shown this once; change it after signing in)`
      : '  Password: the value of HEARTH_ADMIN_PASSWORD',
    `  API:      POST ${config.baseUrl}auth/login {email, password, codeChallenge, codeChallengeMethod}, then POST ${config.baseUrl}oauth2/token`,
    `  Default client id: ${client.id}`,
    '',
  ];
  print(lines.join('\n'));
  return { adminUserId: user.id as string, defaultClientId: client.id as string, generatedPassword, created: true };
}
