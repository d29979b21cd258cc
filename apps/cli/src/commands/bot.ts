/**
 * hearth bot create | save | deploy | run (CONTRACTS.md, Bots): a Bot made through
 * /admin/projects/{id}/bot (or as FHIR resources on a server without /admin), its source code
 * saved as the Bot's sourceCode attachment, Bot/{id}/$deploy, and Bot/{id}/$execute.
 */
import { basename } from 'node:path';
import type { Command } from 'commander';
import { OperationOutcomeError, operationOutcomeToString, type Bot, type OperationOutcome } from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import { contentTypeOf, isJsonType, parseJson, readSource } from '../input.js';
import { CliError, info, isMissingRoute, printBody, printJson } from '../output.js';

/** The project the session acts in (or --project). */
export async function currentProjectId(hearth: CliClient, explicit?: string): Promise<string> {
  if (explicit) {
    return explicit;
  }
  const fromToken = hearth.getProject()?.reference?.replace(/^Project\//, '');
  if (fromToken) {
    return fromToken;
  }
  const details = await hearth.getSessionDetails();
  if (!details?.project?.id) {
    throw new CliError('The session has no project: pass --project <id>');
  }
  return details.project.id;
}

/** Creates a bot: /admin/projects/{id}/bot, or, on a server without /admin, the Bot and its membership as FHIR resources. */
async function createBot(hearth: CliClient, projectId: string, name: string, description?: string): Promise<Bot> {
  try {
    return await hearth.createBot(projectId, { name, ...(description ? { description } : {}) });
  } catch (err) {
    if (!isMissingRoute(err)) {
      throw err;
    }
  }
  const bot = await hearth.createResource<Bot>({
    resourceType: 'Bot',
    name,
    ...(description ? { description } : {}),
    runtimeVersion: 'vmcontext',
  });
  // What POST /admin/projects/{id}/bot does: a membership through which the bot acts in the project.
  await hearth.createResource({
    resourceType: 'ProjectMembership',
    project: { reference: `Project/${projectId}` },
    user: { reference: `Bot/${bot.id}`, display: name },
    profile: { reference: `Bot/${bot.id}`, display: name },
  });
  return bot;
}

/** Uploads a source file as a Binary and makes it the Bot's sourceCode. */
async function saveSource(hearth: CliClient, botId: string, file: string): Promise<Bot> {
  const { bytes, filename } = await readSource(file);
  if (!filename) {
    throw new CliError(`No such file: ${file}`);
  }
  const bot = await hearth.readResource('Bot', botId);
  const contentType = contentTypeOf(filename) ?? 'text/typescript';
  const sourceCode = await hearth.createAttachment({ contentType, data: bytes, filename: basename(filename) });
  return hearth.updateResource({ ...bot, sourceCode } as Bot);
}

async function deploy(hearth: CliClient, botId: string, filename?: string): Promise<OperationOutcome> {
  return hearth.post<OperationOutcome>(
    hearth.fhirUrl('Bot', botId, '$deploy'),
    filename ? { filename } : {},
    'application/json',
  );
}

function botIdentifier(value: string, byIdentifier: boolean): string | { system?: string; value: string } {
  if (!byIdentifier) {
    return value;
  }
  const bar = value.indexOf('|');
  return bar < 0 ? { value } : { system: value.slice(0, bar) || undefined, value: value.slice(bar + 1) };
}

export function registerBotCommands(program: Command): void {
  const bot = program.command('bot').description('Create, save, deploy and run bots');

  bot
    .command('create')
    .description('Create a bot in the current project (optionally saving and deploying its source)')
    .argument('<name>', 'the bot name')
    .argument('[source]', 'a TypeScript or JavaScript file to save as its source code')
    .option('--description <text>', 'a description')
    .option('--project <id>', "the project (default: the session's)")
    .option('--deploy', 'deploy the source after saving it')
    .action(
      async (
        name: string,
        source: string | undefined,
        options: { description?: string; project?: string; deploy?: boolean },
        command: Command,
      ) => {
        const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
        const projectId = await currentProjectId(hearth, options.project);
        let created = await createBot(hearth, projectId, name, options.description);
        info(`Created Bot/${created.id} '${name}' in Project/${projectId}`);
        if (source) {
          created = await saveSource(hearth, created.id as string, source);
          info(`Saved ${source} as its source code`);
          if (options.deploy) {
            await deploy(hearth, created.id as string);
            info(`Deployed Bot/${created.id}`);
          }
        }
        printJson(created);
      },
    );

  bot
    .command('save')
    .description("Save a source file as a bot's sourceCode (a Binary it points at)")
    .argument('<bot>', 'the bot id')
    .argument('<file>', 'the TypeScript or JavaScript source')
    .action(async (botId: string, file: string, _options, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      const saved = await saveSource(hearth, botId, file);
      console.log(`Saved ${file} as the source code of Bot/${botId} (${saved.sourceCode?.url ?? ''})`);
    });

  bot
    .command('deploy')
    .description('Deploy a bot: compile its sourceCode (saved first when a file is given) and install it ($deploy)')
    .argument('<bot>', 'the bot id')
    .argument('[file]', 'a source file to save first')
    .action(async (botId: string, file: string | undefined, _options, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      if (file) {
        await saveSource(hearth, botId, file);
        info(`Saved ${file} as the source code of Bot/${botId}`);
      }
      const outcome = await deploy(hearth, botId, file ? basename(file) : undefined);
      console.log(`Deployed Bot/${botId}: ${outcome ? operationOutcomeToString(outcome) : 'ok'}`);
    });

  bot
    .command('run')
    .description('Run a bot ($execute) with input from a file, stdin (-) or inline JSON; prints its answer')
    .argument('<bot>', 'the bot id (or with --identifier, system|value)')
    .argument('[input]', "the input: a file, '-' for stdin, or inline JSON (none: no body)")
    .option(
      '--content-type <type>',
      'the content type of the input (default: from the file name, else application/json)',
    )
    .option('--identifier', 'find the bot by identifier (system|value) rather than id')
    .action(
      async (
        target: string,
        input: string | undefined,
        options: { contentType?: string; identifier?: boolean },
        command: Command,
      ) => {
        const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
        let body: string | Buffer | undefined;
        let contentType = options.contentType ?? 'application/json';
        if (input !== undefined) {
          const { bytes, filename } = await readSource(input);
          contentType = options.contentType ?? contentTypeOf(filename) ?? 'application/json';
          if (isJsonType(contentType)) {
            parseJson(bytes, filename ?? 'The input');
            body = bytes.toString('utf8');
          } else {
            body = contentType.startsWith('text/') ? bytes.toString('utf8') : bytes;
          }
        }
        const bot = botIdentifier(target, !!options.identifier);
        try {
          if (body === undefined) {
            // No input: GET $execute (the bot's input is then the query, here empty).
            const url =
              typeof bot === 'string'
                ? hearth.fhirUrl('Bot', bot, '$execute')
                : hearth.fhirSearchUrl('Bot/$execute', { identifier: `${bot.system ?? ''}|${bot.value}` });
            printBody(await hearth.get(url, { cache: 'no-cache' }));
          } else {
            printBody(await hearth.executeBot(bot, body, contentType));
          }
        } catch (err) {
          if (err instanceof OperationOutcomeError) {
            throw new CliError(`The bot failed: ${operationOutcomeToString(err.outcome)}`, 1, err.outcome);
          }
          throw err;
        }
      },
    );
}
