// Bot/{id}/$deploy and Bot/{id}/$execute (also Bot/$execute?identifier=system|value).
import { allOk, badRequest, fail, unstorableCharacter, type Bot, type Resource } from '@hearth/core';
import { BOT_DEPLOY, BOT_EXECUTE } from '../operations/definitions/hearth.js';
import { mediaTypeOf, prefersAsync } from '../operations/input.js';
import type { OperationRegistry } from '../operations/registry.js';
import { FHIR_JSON, jsonResult } from '../operations/result.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import { compileBotSource, readAttachmentText, storeCode } from './code.js';
import type { BotRunner, BotRunResult } from './runner.js';
import type { AsyncJobs } from '../jobs/async-job.js';

export interface BotOperationDeps {
  runner: BotRunner;
  systemRepo: (projectId?: string) => Repository;
  binaryStore: BinaryStore;
  asyncJobs: AsyncJobs;
}

interface AsyncExecute {
  botId: string;
  input: unknown;
  contentType: string;
  traceId: string;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json$/;

/** Media types whose bodies are text (handed to the bot as a string); any other body is base64. */
function isTextual(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    /xml|hl7|er7|csv|javascript|x-www-form-urlencoded|yaml|edi|x12|astm/.test(mediaType)
  );
}

/** The bot's input and content type from the request: query parameters (GET) or the body in any format (POST). */
export function executeInput(request: OperationInput, skip: string[] = []): { input: unknown; contentType: string } {
  if (request.method === 'GET') {
    const input: Record<string, string | string[]> = {};
    for (const [k, v] of request.query) {
      if (skip.includes(k)) {
        continue;
      }
      const prev = input[k];
      input[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return { input, contentType: 'application/x-www-form-urlencoded' };
  }
  const contentType = request.headers['content-type'] ?? 'application/json';
  const body = request.body;
  if (body === undefined || body === null) {
    return { input: undefined, contentType };
  }
  if (Buffer.isBuffer(body)) {
    const media = mediaTypeOf(request);
    return { input: isTextual(media) || media === '' ? body.toString('utf8') : body.toString('base64'), contentType };
  }
  return { input: body, contentType };
}

/**
 * The content type of a bot's text result: the one the caller accepts when it names a text type
 * (Accept: text/html, x-application/hl7-v2+er7, ...), else the request's own text type (an HL7 v2
 * message is answered in HL7 v2), else plain text.
 */
function textResultType(request: OperationInput): string {
  const accepted = (request.headers.accept ?? '').split(',')[0].split(';')[0].trim().toLowerCase();
  if (accepted && !accepted.includes('*') && isTextual(accepted) && !JSON_TYPE.test(accepted)) {
    return /^text\//.test(accepted) ? `${accepted}; charset=utf-8` : accepted;
  }
  const media = request.method === 'POST' ? mediaTypeOf(request) : '';
  return media && isTextual(media) && !JSON_TYPE.test(media)
    ? (request.headers['content-type'] as string)
    : 'text/plain; charset=utf-8';
}

/**
 * A bot's return value with the content type it calls for, always with the run's X-Trace-Id; a
 * failed run is a 400 OperationOutcome (the trace id still names the run in the bot's audit).
 */
function botResult(request: OperationInput, result: BotRunResult): OperationResult {
  const headers = { 'x-trace-id': result.traceId };
  if (!result.ok) {
    return { status: 400, headers, json: badRequest(result.message) };
  }
  const value = result.value;
  if (value === undefined || value === null) {
    return { headers };
  }
  if (typeof value === 'string') {
    return { headers, body: value, contentType: textResultType(request) };
  }
  if (typeof value === 'object' && typeof (value as Resource).resourceType === 'string') {
    return { headers, body: JSON.stringify(value), contentType: FHIR_JSON };
  }
  return { headers, body: JSON.stringify(value), contentType: 'application/json; charset=utf-8' };
}

async function readBot(repo: Repository, id: string): Promise<Bot> {
  return (await repo.readResource<Resource>('Bot', id)).resource as unknown as Bot;
}

export function registerBotOperations(registry: OperationRegistry, deps: BotOperationDeps): void {
  // $execute with Prefer: respond-async: the run is a job; its result lands in AsyncJob.output.
  deps.asyncJobs.define<AsyncExecute>('bot-execute', async (params, job) => {
    const bot = await readBot(job.repo, params.botId);
    const result = await deps.runner.run({
      bot,
      input: params.input,
      contentType: params.contentType,
      callerRepo: job.repo,
      requester: job.repo.scope.author,
      traceId: params.traceId,
      entities: [`AsyncJob/${job.asyncJobId}`],
    });
    if (!result.ok) {
      fail(badRequest(result.message));
    }
    const value = result.value;
    const parameter =
      value === undefined || value === null
        ? []
        : typeof value === 'object' && typeof (value as Resource).resourceType === 'string'
          ? [{ name: 'responseBody', resource: value }]
          : [{ name: 'responseBody', valueString: typeof value === 'string' ? value : JSON.stringify(value) }];
    return { resourceType: 'Parameters', parameter };
  });

  const execute = async (request: OperationInput): Promise<OperationResult> => {
    const { repo } = request.context;
    const id = request.target.id;
    let bot: Bot;
    if (id) {
      bot = await readBot(repo, id);
    } else {
      const identifier = request.query.get('identifier');
      if (!identifier) {
        fail(
          badRequest('Bot/$execute needs an identifier parameter (system|value) or a bot id in the path', 'identifier'),
        );
      }
      bot = await deps.runner.resolve(repo, identifier);
    }
    const { input, contentType } = executeInput(request, id ? [] : ['identifier']);
    const given = request.headers['x-trace-id'];
    const traceId = typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : request.context.requestId;
    if (prefersAsync(request)) {
      // The job stores its input in the database; a text body reaches the server unchecked (raw bytes).
      const bad = typeof input === 'string' ? unstorableCharacter(input) : undefined;
      if (bad) {
        fail(
          badRequest(
            `The body contains ${bad}, which an asynchronous $execute cannot store: send it without Prefer: respond-async, or as binary content`,
            'body',
          ),
        );
      }
      const params: AsyncExecute = { botId: bot.id as string, input, contentType, traceId };
      return deps.asyncJobs.start(request, 'bot-execute', params);
    }
    const result = await deps.runner.run({
      bot,
      input,
      contentType,
      callerRepo: repo,
      requester: repo.scope.author,
      traceId,
    });
    return botResult(request, result);
  };

  registry.register({
    definition: BOT_EXECUTE,
    // A bot may change data, yet webhooks call it with GET and query parameters: GET is allowed too.
    override: { methods: ['GET', 'POST'] },
    handler: execute,
  });

  registry.register({
    definition: BOT_DEPLOY,
    handler: async (request) => {
      const { repo } = request.context;
      const bot = await readBot(repo, request.target.id as string);
      const body = (request.body ?? {}) as { code?: unknown; filename?: unknown };
      if (typeof body !== 'object' || Buffer.isBuffer(body) || Array.isArray(body)) {
        fail(badRequest('$deploy takes a JSON body { code?, filename? }'));
      }
      if (body.code !== undefined && typeof body.code !== 'string') {
        fail(badRequest('code must be a string of JavaScript', 'code'));
      }
      if (body.filename !== undefined && typeof body.filename !== 'string') {
        fail(badRequest('filename must be a string', 'filename'));
      }
      const projectId = bot.meta?.project as string;
      let compiled: string;
      let filename: string;
      if (typeof body.code === 'string') {
        filename = body.filename ?? 'index.js';
        compiled = await compileBotSource(body.code, filename);
      } else {
        if (!bot.sourceCode) {
          fail(badRequest('The bot has no sourceCode to compile; send code in the body', 'Bot.sourceCode'));
        }
        filename = body.filename ?? bot.sourceCode.title ?? 'index.ts';
        const source = await readAttachmentText(repo, deps.binaryStore, bot.sourceCode, 'Bot.sourceCode');
        compiled = await compileBotSource(source, filename, bot.sourceCode.contentType);
      }
      const executableCode = await storeCode(
        deps.systemRepo(projectId),
        deps.binaryStore,
        compiled,
        filename.replace(/\.(ts|mts|cts|tsx)$/i, '.js'),
      );
      await repo.updateResource({ ...bot, executableCode } as unknown as Resource, {
        ifMatch: Number(bot.meta?.versionId),
      });
      return jsonResult(allOk);
    },
  });
}
