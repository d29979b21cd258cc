/** The `hearth` command tree (commander): global options and every command. */
import { Command } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import { registerAdminCommands } from './commands/admin.js';
import { registerAgentCommands } from './commands/agent.js';
import { registerAuthCommands } from './commands/auth.js';
import { registerBotCommands } from './commands/bot.js';
import { registerExportCommand } from './commands/export.js';
import { registerImportCommand } from './commands/import.js';
import { registerProfileCommands } from './commands/profile.js';
import { registerProjectCommands } from './commands/project.js';
import { registerRestCommands } from './commands/rest.js';

export function createProgram(): Command {
  const program = new Command('hearth')
    .description(
      'The Hearth command line: sign in, call the FHIR API, search, import, export, run bots, manage projects, administer the server',
    )
    .version(pkg.version, '-V, --version')
    .option('-p, --profile <name>', 'the stored profile to use (env HEARTH_PROFILE)', undefined)
    .option('--base-url <url>', "the server (env HEARTH_BASE_URL; default: the profile's, else http://localhost:8103/)")
    .option('--verbose', 'print more about errors')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      '\nSessions: a stored profile (hearth login), or for scripts and CI the environment variables\n' +
        'HEARTH_ACCESS_TOKEN, or HEARTH_CLIENT_ID and HEARTH_CLIENT_SECRET (with HEARTH_BASE_URL).\n' +
        'Exit codes: 0 done, 1 failed, 2 not available on this server, 130 interrupted.',
    );
  registerAuthCommands(program);
  registerRestCommands(program);
  registerImportCommand(program);
  registerExportCommand(program);
  registerBotCommands(program);
  registerProjectCommands(program);
  registerAgentCommands(program);
  registerAdminCommands(program);
  registerProfileCommands(program);
  return program;
}
