/**
 * hearth profile list | show | remove: the named profiles kept in ~/.hearth/profiles (one server
 * and its logins each). Commands choose one with --profile or HEARTH_PROFILE; 'default' otherwise.
 */
import type { Command } from 'commander';
import { profileNameOf, type GlobalOptions } from '../client.js';
import { CliError, formatTable, info, printJson } from '../output.js';
import { activeLogin, deleteProfile, listProfiles, loadProfile, profilePath, type Profile } from '../profiles.js';

/** What is shown of a profile: never its tokens or secret. */
function summary(profile: Profile, current: string) {
  const login = activeLogin(profile);
  return {
    name: profile.name,
    current: profile.name === current,
    baseUrl: profile.baseUrl,
    authMethod: profile.authMethod ?? null,
    clientId: profile.clientId ?? null,
    activeProject: profile.activeProject || null,
    projectName: login?.projectName ?? null,
    account: login?.account ?? null,
    signedIn: login !== undefined,
    expiresAt: login?.expiresAt ? new Date(login.expiresAt).toISOString() : null,
    projects: Object.keys(profile.logins).filter(Boolean),
  };
}

function load(name: string): Profile {
  const profile = loadProfile(name);
  if (!profile) {
    const known = listProfiles();
    throw new CliError(
      `No profile '${name}'${known.length ? `; the profiles are: ${known.join(', ')}` : ": sign in with 'hearth login'"}`,
    );
  }
  return profile;
}

export function registerProfileCommands(program: Command): void {
  const profile = program
    .command('profile')
    .description('List, show and remove the stored profiles (~/.hearth/profiles; choose one with --profile)');

  profile
    .command('list')
    .description('Every stored profile: server, how it signs in, its active project (* = the one in use)')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }, command: Command) => {
      const current = profileNameOf(command.optsWithGlobals<GlobalOptions>());
      const profiles = listProfiles().map((name) => summary(load(name), current));
      if (options.json) {
        printJson(profiles);
        return;
      }
      if (!profiles.length) {
        info("No profiles yet: sign in with 'hearth login' (add --profile <name> to keep several)");
        return;
      }
      const rows = profiles.map((p) => [
        p.current ? '*' : '',
        p.name,
        p.baseUrl,
        p.authMethod ?? '',
        p.signedIn ? `${p.projectName ?? ''} (${p.activeProject ?? 'no project'})` : 'signed out',
        p.account ?? '',
      ]);
      console.log(formatTable(['', 'name', 'server', 'sign-in', 'project', 'account'], rows));
    });

  profile
    .command('show')
    .description('One profile (default: the one in use), without its tokens')
    .argument('[name]', 'the profile')
    .action((name: string | undefined, _options, command: Command) => {
      const current = profileNameOf(command.optsWithGlobals<GlobalOptions>());
      const stored = load(name ?? current);
      printJson({ ...summary(stored, current), file: profilePath(stored.name) });
    });

  profile
    .command('remove')
    .description("Delete a stored profile here (to end its sessions on the server too: 'hearth logout --all')")
    .argument('<name>', 'the profile')
    .action((name: string) => {
      load(name);
      deleteProfile(name);
      console.log(`Removed profile '${name}'`);
    });
}
