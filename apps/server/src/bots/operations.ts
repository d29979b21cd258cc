// Bot/{id}/$deploy and Bot/{id}/$execute (also Bot/$execute?identifier=system|value).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { allOk, badRequest, fail, unstorableCharacter, type Bot, type Resource } from '@hearth/core';
import { ctx } from '../fhir/context.js';
import type { OperationRegistry } from '../fhir/operations/registry.js';
import { FHIR_JSON, sendJson } from '../http/fhir-reply.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import { compileBotSource, readAttachmentText, storeCode } from './code.js';
import type { BotRunner, BotRunResult } from './runner.js';
import { prefersAsync, type AsyncJobs } from '../jobs/async-job.js';

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

function mediaTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

/** The bot's input and content type from the request: query parameters (GET) or the body in any format (POST). */
export function executeInput(request: FastifyRequest, skip: string[] = []): { input: unknown; contentType: string } {
  if (request.method === 'GET') {
    const input: Record<string, string | string[]> = {};
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    for (const [k, v] of new URLSearchParams(query)) {
      if (skip.includes(k)) {
        continue;
      }
      const prev = input[k];
      input[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return { input, contentType: 'application/x-www-form-urlencoded' };
  }
  const contentType = String(request.headers['content-type'] ?? 'application/json');
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
function textResultType(request: FastifyRequest): string {
  const accepted = String(request.headers.accept ?? '')
    .split(',')[0]
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (accepted && !accepted.includes('*') && isTextual(accepted) && !JSON_TYPE.test(accepted)) {
    return /^text\//.test(accepted) ? `${accepted}; charset=utf-8` : accepted;
  }
  const media = request.method === 'POST' ? mediaTypeOf(request) : '';
  return media && isTextual(media) && !JSON_TYPE.test(media)
    ? String(request.headers['content-type'])
    : 'text/plain; charset=utf-8';
}

/** Sends a bot's return value with the content type it calls for. */
function sendResult(request: FastifyRequest, reply: FastifyReply, result: BotRunResult): FastifyReply {
  reply.header('x-trace-id', result.traceId);
  if (!result.ok) {
    fail(badRequest(result.message));
  }
  const value = result.value;
  if (value === undefined || value === null) {
    return reply.code(200).send();
  }
  if (typeof value === 'string') {
    return reply.code(200).header('content-type', textResultType(request)).send(value);
  }
  if (typeof value === 'object' && typeof (value as Resource).resourceType === 'string') {
    return reply.code(200).header('content-type', FHIR_JSON).send(JSON.stringify(value));
  }
  return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(value));
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

  const execute = async (
    request: FastifyRequest,
    reply: FastifyReply,
    id: string | undefined,
  ): Promise<FastifyReply> => {
    const { repo, fhirBase } = ctx(request);
    let bot: Bot;
    if (id) {
      bot = await readBot(repo, id);
    } else {
      const identifier = new URLSearchParams(request.url.split('?')[1] ?? '').get('identifier');
      if (!identifier) {
        fail(
          badRequest('Bot/$execute needs an identifier parameter (system|value) or a bot id in the path', 'identifier'),
        );
      }
      bot = await deps.runner.resolve(repo, identifier);
    }
    const { input, contentType } = executeInput(request, id ? [] : ['identifier']);
    const given = request.headers['x-trace-id'];
    const traceId = typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : request.id;
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
      return deps.asyncJobs.start(request, reply, repo, fhirBase, 'bot-execute', params);
    }
    const result = await deps.runner.run({
      bot,
      input,
      contentType,
      callerRepo: repo,
      requester: repo.scope.author,
      traceId,
    });
    return sendResult(request, reply, result);
  };

  registry.register({
    name: 'execute',
    levels: ['instance', 'type'],
    resourceTypes: ['Bot'],
    methods: ['GET', 'POST'],
    handler: (request, reply, target) => execute(request, reply, target.id),
  });

  registry.register({
    name: 'deploy',
    levels: ['instance'],
    resourceTypes: ['Bot'],
    methods: ['POST'],
    handler: async (request, reply, target) => {
      const { repo } = ctx(request);
      const bot = await readBot(repo, target.id as string);
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
      return sendJson(reply, 200, allOk);
    },
  });
}
