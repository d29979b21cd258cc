/**
 * Named profiles under ~/.hearth/profiles/<name>.json: the server, how the profile signs in, and
 * one stored login per project (the active one is what commands use). Files holding tokens are
 * written with mode 0600 (directory 0700) and replaced atomically.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ClientStorage, LoginState, Reference } from '@hearth/core';
import { CliError } from './output.js';

/** How a profile signs in. */
export type AuthMethod = 'authorization-code' | 'password' | 'client-credentials';

/** A project sign-in kept in a profile: the SDK's session plus what to show about it. */
export interface StoredLogin extends LoginState {
  projectName?: string;
  profileDisplay?: string;
  membershipId?: string;
  /** The user's email (or the client's name) at sign-in. */
  account?: string;
}

/** A membership the user has (learnt at a password sign-in) but that has no stored login. */
export interface KnownMembership {
  id: string;
  project: Reference;
  profile?: Reference;
}

export interface Profile {
  name: string;
  baseUrl: string;
  authMethod?: AuthMethod;
  /** The ClientApplication used to sign in (browser and password flows), or the client of client credentials. */
  clientId?: string;
  /** Client credentials only: kept so that the CLI can sign in again when the token expires. */
  clientSecret?: string;
  /** The reference of the active login's project ('' for a login without a project). */
  activeProject?: string;
  logins: Record<string, StoredLogin>;
  memberships?: KnownMembership[];
  /** Other keys the SDK keeps (a pending redirect sign-in). */
  storage?: Record<string, string>;
}

export const DEFAULT_PROFILE = 'default';
const ACTIVE_LOGIN = 'activeLogin';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** ~/.hearth (HOME is read at each call, so that tests and scripts can point it elsewhere). */
export function hearthHome(): string {
  return join(process.env.HOME || homedir(), '.hearth');
}

function profilesDir(): string {
  return join(hearthHome(), 'profiles');
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new CliError(`Invalid profile name '${name}': use letters, digits, '.', '_' or '-'`);
  }
  return name;
}

export function profilePath(name: string): string {
  return join(profilesDir(), `${checkProfileName(name)}.json`);
}

/** Creates ~/.hearth (and a subdirectory) readable by the user only. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes a file readable by the user only, atomically (temp file + rename). */
export function writePrivateFile(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

export function loadProfile(name: string): Profile | undefined {
  const path = profilePath(name);
  if (!existsSync(path)) {
    return undefined;
  }
  try {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
    return { ...profile, name, logins: profile.logins ?? {} };
  } catch (err) {
    throw new CliError(`The profile file ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

export function saveProfile(profile: Profile): void {
  ensurePrivateDir(hearthHome());
  ensurePrivateDir(profilesDir());
  writePrivateFile(profilePath(profile.name), `${JSON.stringify(profile, null, 2)}\n`);
}

export function deleteProfile(name: string): boolean {
  const path = profilePath(name);
  if (!existsSync(path)) {
    return false;
  }
  rmSync(path);
  return true;
}

export function listProfiles(): string[] {
  const dir = profilesDir();
  if (!existsSync(dir)) {
    return [];
  }
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** The active login of a profile, if any. */
export function activeLogin(profile: Profile): StoredLogin | undefined {
  return profile.activeProject !== undefined ? profile.logins[profile.activeProject] : undefined;
}

/**
 * The SDK's storage backed by a profile file. The session ('activeLogin') is kept per project:
 * a sign-in or token renewal updates the login of its project and makes it the active one; a
 * sign-out (or a session the server refused) removes the active login. Every change is saved.
 */
export class ProfileStorage implements ClientStorage {
  constructor(readonly profile: Profile) {}

  getItem(key: string): string | null {
    if (key === ACTIVE_LOGIN) {
      const login = activeLogin(this.profile);
      return login ? JSON.stringify(login) : null;
    }
    return this.profile.storage?.[key] ?? null;
  }

  setItem(key: string, value: string): void {
    if (key === ACTIVE_LOGIN) {
      const state = JSON.parse(value) as LoginState;
      const project = state.project?.reference ?? '';
      // A renewal keeps what the CLI learnt about the login (names, membership).
      const previous = this.profile.logins[project];
      this.profile.logins[project] = { ...previous, ...state };
      this.profile.activeProject = project;
    } else {
      this.profile.storage = { ...this.profile.storage, [key]: value };
    }
    saveProfile(this.profile);
  }

  removeItem(key: string): void {
    if (key === ACTIVE_LOGIN) {
      if (this.profile.activeProject !== undefined) {
        delete this.profile.logins[this.profile.activeProject];
      }
      this.profile.activeProject = undefined;
    } else if (this.profile.storage) {
      delete this.profile.storage[key];
    }
    saveProfile(this.profile);
  }

  /** The login of this profile's active project as the profile file has it now (another run may have renewed it). */
  storedActiveLogin(): StoredLogin | undefined {
    const project = this.profile.activeProject;
    return project === undefined ? undefined : loadProfile(this.profile.name)?.logins[project];
  }

  /** Adds display details to the active login and saves them. */
  describeActiveLogin(details: Partial<StoredLogin>): void {
    const project = this.profile.activeProject;
    if (project !== undefined && this.profile.logins[project]) {
      this.profile.logins[project] = { ...this.profile.logins[project], ...details };
      saveProfile(this.profile);
    }
  }
}

/** A lock older than this was left by a run that died: it is broken. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 20_000;

/**
 * Runs `fn` holding the profile's lock file (<profile>.json.lock, created exclusively), so that
 * runs of the CLI sharing a profile renew its session one at a time: the server rotates refresh
 * tokens, and a second use of the same one would revoke the login.
 */
export async function withProfileLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  ensurePrivateDir(hearthHome());
  ensurePrivateDir(profilesDir());
  const lock = `${profilePath(name)}.lock`;
  const started = Date.now();
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
      let age = 0;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > STALE_LOCK_MS) {
        rmSync(lock, { force: true });
      } else if (Date.now() - started > LOCK_WAIT_MS) {
        throw new CliError(
          `Profile '${name}' is locked by another hearth run (${lock}); remove the file if none is running`,
        );
      } else {
        await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 50));
      }
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
