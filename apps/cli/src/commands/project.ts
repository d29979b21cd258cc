/**
 * hearth project list | switch | show | invite. A profile keeps one login per project; `switch`
 * makes another of them the active one. Invitations and project details go through
 * /admin/projects/{id} (project admins).
 */
import type { Command } from 'commander';
import { getDisplayString, type InviteRequest } from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import { CliError, EXIT_UNAVAILABLE, formatTable, info, isMissingRoute, printJson } from '../output.js';
import { saveProfile } from '../profiles.js';
import { currentProjectId } from './bot.js';

interface ProjectRow {
  id: string;
  name: string;
  profile: string;
  active: boolean;
  signedIn: boolean;
}

/** Runs an /admin call; a server without /admin is told apart (exit code 2). */
async function admin<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isMissingRoute(err)) {
      throw new CliError('Project administration (/admin/projects) is not available on this server', EXIT_UNAVAILABLE);
    }
    throw err;
  }
}

async function listProjects(options: GlobalOptions, json: boolean): Promise<void> {
  const connection = await connect(options, false);
  const rows: ProjectRow[] = [];
  const profile = connection.source === 'profile' || connection.source === 'none' ? connection.profile : undefined;
  if (profile) {
    for (const [ref, login] of Object.entries(profile.logins)) {
      rows.push({
        id: ref.replace(/^Project\//, ''),
        name: login.projectName ?? '',
        profile: login.profileDisplay ?? login.profile?.reference ?? '',
        active: ref === profile.activeProject,
        signedIn: true,
      });
    }
    for (const m of profile.memberships ?? []) {
      const id = m.project.reference?.replace(/^Project\//, '') ?? '';
      if (!rows.some((r) => r.id === id)) {
        rows.push({
          id,
          name: m.project.display ?? '',
          profile: m.profile?.display ?? m.profile?.reference ?? '',
          active: false,
          signedIn: false,
        });
      }
    }
  } else if (connection.source !== 'none') {
    const details = await connection.hearth.getSessionDetails();
    if (details?.project) {
      rows.push({
        id: details.project.id as string,
        name: details.project.name ?? '',
        profile: details.profile ? getDisplayString(details.profile as never) : '',
        active: true,
        signedIn: true,
      });
    }
  }
  if (json) {
    printJson(rows);
    return;
  }
  if (rows.length === 0) {
    info(`No projects: sign in with 'hearth login' (profile '${connection.profileName}')`);
    return;
  }
  console.log(
    formatTable(
      ['', 'project', 'name', 'as', 'session'],
      rows.map((r) => [
        r.active ? '*' : '',
        r.id,
        r.name,
        r.profile,
        r.signedIn ? 'signed in' : `hearth login --project ${r.id}`,
      ]),
    ),
  );
}

async function switchProject(options: GlobalOptions, projectId: string): Promise<void> {
  const connection = await connect(options, false);
  if (connection.source === 'access-token' || connection.source === 'client-credentials-env') {
    throw new CliError('The session comes from environment variables: there is no stored project to switch to');
  }
  const profile = connection.profile;
  const ref = projectId.startsWith('Project/') ? projectId : `Project/${projectId}`;
  if (!profile?.logins[ref]) {
    const known = Object.keys(profile?.logins ?? {}).map((r) => r.replace(/^Project\//, ''));
    throw new CliError(
      `Profile '${connection.profileName}' has no login for ${ref}` +
        (known.length ? ` (it has: ${known.join(', ')})` : '') +
        `: sign in to it with 'hearth login --project ${ref.replace(/^Project\//, '')}'`,
    );
  }
  profile.activeProject = ref;
  saveProfile(profile);
  // Checks that the stored session still works (renewing it if needed).
  const { hearth } = await connect(options);
  const details = await hearth.getSessionDetails();
  console.log(`Switched to project ${details?.project?.name ?? ''} (${ref}); profile '${profile.name}'`);
}

async function showProject(hearth: CliClient, projectId: string, json: boolean): Promise<void> {
  const details = await admin(() =>
    hearth.getProjectAdmin<{
      project: { id: string; name?: string; description?: string };
      members: {
        id: string;
        profile?: { reference?: string; display?: string };
        user?: { reference?: string; display?: string };
        admin?: boolean;
      }[];
      clients: { id: string; name?: string }[];
      bots: { id: string; name?: string }[];
    }>(projectId),
  );
  if (json) {
    printJson(details);
    return;
  }
  console.log(
    `${details.project.name ?? ''} (Project/${details.project.id})${details.project.description ? `: ${details.project.description}` : ''}\n`,
  );
  console.log(
    formatTable(
      ['membership', 'profile', 'user', 'admin'],
      details.members.map((m) => [
        m.id,
        m.profile?.display ?? m.profile?.reference ?? '',
        m.user?.display ?? m.user?.reference ?? '',
        m.admin ? 'yes' : '',
      ]),
    ),
  );
  const named = (title: string, list: { id: string; name?: string }[]) => {
    if (list.length) {
      console.log(
        `\n${formatTable(
          [title, 'name'],
          list.map((r) => [r.id, r.name ?? '']),
        )}`,
      );
    }
  };
  named('client', details.clients);
  named('bot', details.bots);
}

interface InviteOptions {
  firstName: string;
  lastName: string;
  resourceType: string;
  admin?: boolean;
  password?: string;
  sendEmail?: boolean;
  externalId?: string;
  project?: string;
}

export function registerProjectCommands(program: Command): void {
  const project = program.command('project').description('List, switch, show projects and invite users');

  project
    .command('list')
    .description('The projects of the profile: the signed-in ones (* = active) and other memberships learnt at sign-in')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) =>
      listProjects(command.optsWithGlobals<GlobalOptions>(), !!options.json),
    );

  project
    .command('switch')
    .description('Make the login of another project the active one')
    .argument('<project>', 'the project id')
    .action(async (projectId: string, _options, command: Command) =>
      switchProject(command.optsWithGlobals<GlobalOptions>(), projectId),
    );

  project
    .command('show')
    .description("A project's members, clients and bots (GET /admin/projects/{id}; project admins)")
    .argument('[project]', 'the project id (default: the current one)')
    .option('--json', 'print JSON')
    .action(async (projectId: string | undefined, options: { json?: boolean }, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      await showProject(hearth, await currentProjectId(hearth, projectId), !!options.json);
    });

  project
    .command('invite')
    .description('Invite a user into the project (POST /admin/projects/{id}/invite); prints the new membership')
    .argument('<email>', "the user's email")
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .option('--resource-type <type>', 'the profile resource: Practitioner, Patient or RelatedPerson', 'Practitioner')
    .option('--admin', 'make them a project admin')
    .option('--password <password>', 'set their password (otherwise they set it through the emailed link)')
    .option('--send-email', 'send the invitation email')
    .option('--external-id <id>', 'an external identifier of the user')
    .option('--project <id>', 'the project (default: the current one)')
    .action(async (email: string, options: InviteOptions, command: Command) => {
      if (!['Practitioner', 'Patient', 'RelatedPerson'].includes(options.resourceType)) {
        throw new CliError('--resource-type must be Practitioner, Patient or RelatedPerson');
      }
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      const projectId = await currentProjectId(hearth, options.project);
      const request: InviteRequest = {
        resourceType: options.resourceType as InviteRequest['resourceType'],
        firstName: options.firstName,
        lastName: options.lastName,
        email,
        sendEmail: !!options.sendEmail,
        ...(options.password ? { password: options.password } : {}),
        ...(options.externalId ? { externalId: options.externalId } : {}),
        ...(options.admin ? { membership: { admin: true } } : {}),
      };
      const membership = await admin(() => hearth.invite(projectId, request));
      info(`Invited ${email} into Project/${projectId} as ${membership.profile?.reference ?? options.resourceType}`);
      printJson(membership);
    });
}
