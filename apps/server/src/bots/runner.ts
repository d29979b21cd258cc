import { randomUUID } from 'node:crypto';
import { badRequest, fail, type Bot, type ProjectSetting, type Reference, type Resource } from '@hearth/core';
import type { Config } from '../config/schema.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound-http.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import type { SearchService } from '../search/service.js';
import type { MemberRepositories } from '../jobs/actor.js';
import type { AuditWriter } from './audit.js';
import { TtlCache } from '../platform/ttl-cache.js';
import { createHostCall } from './bridge.js';
import { binaryIdOf, readAttachmentText, toSandboxScript } from './code.js';
import type { BotSandbox, LogLine } from './sandbox.js';
import { SpanStatusCode } from '@opentelemetry/api';
import { ATTR, inSpan, type Telemetry } from '../observability/telemetry.js';

/** The second argument of a bot's handler (the spec's BotEvent). */
export interface BotEvent {
  bot: Reference;
  contentType: string;
  input: unknown;
  secrets: Record<string, ProjectSetting>;
  traceId: string;
  /** Who asked for the run: the caller of $execute, or the subscription that fired. */
  requester?: Reference;
}

export interface BotRunRequest {
  bot: Bot;
  input: unknown;
  contentType: string;
  traceId?: string;
  /** The caller, for bots that run as the user who invokes them (Bot.runAsUser). */
  callerRepo?: Repository;
  requester?: Reference;
  /** Further references the AuditEvent names (the subscription, the resource that triggered it). */
  entities?: string[];
  /** Bots run by bots: depth 0 is a run asked for from outside. */
  depth?: number;
}

export type BotRunResult = ({ ok: true; value: unknown } | { ok: false; reason: string; message: string }) & {
  logs: LogLine[];
  traceId: string;
  durationMs: number;
  auditEventId?: string;
};

export interface BotRunnerDeps {
  sandbox: BotSandbox;
  members: MemberRepositories;
  systemRepo: (projectId?: string) => Repository;
  binaryStore: BinaryStore;
  search: SearchService;
  outbound: OutboundPolicy;
  config: Pick<Config, 'botTimeoutMs' | 'outboundTimeoutMs' | 'baseUrl'>;
  logger: Logger;
  audits: AuditWriter;
  /** A span per run (under the caller's: a request, a delivery job), runs timed by outcome. */
  telemetry?: Telemetry;
}

/** Bots may run bots (client.executeBot), to this depth. */
const MAX_DEPTH = 3;

/** Runs deployed bots: loads their code, builds their event and client, runs them sandboxed, audits. */
export class BotRunner {
  /** Deployed code by Binary and content hash (a deploy writes a new Binary; the hash names the content). */
  private readonly code = new TtlCache<{ key: string; script: string }>(10 * 60_000, 200);
  /** Project secrets, briefly (writes of the Project in this process clear them: invalidate()). */
  private readonly projectSecrets = new TtlCache<Resource>(5000);

  constructor(private readonly deps: BotRunnerDeps) {}

  /** Forgets cached project secrets (a Project was written). */
  invalidate(): void {
    this.projectSecrets.clear();
  }

  private fhirBase(): string {
    return `${this.deps.config.baseUrl}fhir/R4/`;
  }

  /** The deployed code of a bot (executableCode, or the legacy inline Bot.code). */
  async loadCode(bot: Bot, projectId: string): Promise<{ key: string; script: string }> {
    const repo = this.deps.systemRepo(projectId);
    const attachment = bot.executableCode;
    if (attachment?.url && attachment.hash && !attachment.data) {
      return this.code.get(`${projectId}|${attachment.url}|${attachment.hash}`, async () =>
        toSandboxScript(await readAttachmentText(repo, this.deps.binaryStore, attachment, 'Bot.executableCode')),
      );
    }
    let moduleCode: string;
    if (bot.executableCode && (bot.executableCode.data || binaryIdOf(bot.executableCode.url))) {
      moduleCode = await readAttachmentText(repo, this.deps.binaryStore, bot.executableCode, 'Bot.executableCode');
    } else if (typeof bot.code === 'string' && bot.code.trim()) {
      moduleCode = bot.code;
    } else {
      fail(badRequest(`Bot/${bot.id} has not been deployed: call Bot/${bot.id}/$deploy first`));
    }
    return toSandboxScript(moduleCode);
  }

  private async secrets(bot: Bot, projectId: string): Promise<Record<string, ProjectSetting>> {
    const resource = await this.projectSecrets.get(
      projectId,
      async () => (await this.deps.systemRepo(projectId).readResource('Project', projectId)).resource,
    );
    const project = resource as Resource & { secret?: ProjectSetting[]; systemSecret?: ProjectSetting[] };
    const out: Record<string, ProjectSetting> = {};
    for (const s of [...(bot.system ? (project.systemSecret ?? []) : []), ...(project.secret ?? [])]) {
      if (s && typeof s.name === 'string') {
        out[s.name] = s;
      }
    }
    return out;
  }

  async run(request: BotRunRequest): Promise<BotRunResult> {
    const { bot } = request;
    const projectId = bot.meta?.project;
    if (!bot.id || !projectId) {
      fail(badRequest('The bot has no id or project'));
    }
    const traceId = request.traceId ?? randomUUID();
    const depth = request.depth ?? 0;
    const start = new Date();
    const botRef = `Bot/${bot.id}`;
    const [code, secrets, repo] = await Promise.all([
      this.loadCode(bot, projectId),
      this.secrets(bot, projectId),
      bot.runAsUser && request.callerRepo ? request.callerRepo : this.deps.members.forProfile(projectId, botRef),
    ]);
    const event: BotEvent = {
      bot: { reference: botRef, ...(bot.name ? { display: bot.name } : {}) },
      contentType: request.contentType,
      input: request.input,
      secrets,
      traceId,
      ...(request.requester ? { requester: request.requester } : {}),
    };
    const host = createHostCall({
      repo,
      search: this.deps.search,
      fhirBase: this.fhirBase(),
      outbound: this.deps.outbound,
      outboundTimeoutMs: this.deps.config.outboundTimeoutMs,
      executeBot:
        depth + 1 < MAX_DEPTH
          ? async (target, input, contentType) => {
              const nested = await this.resolve(repo, target);
              const result = await this.run({
                bot: nested,
                input,
                contentType: contentType ?? 'application/json',
                traceId,
                callerRepo: repo,
                requester: { reference: botRef },
                depth: depth + 1,
              });
              if (!result.ok) {
                fail(badRequest(`${target}: ${result.message}`));
              }
              return result.value;
            }
          : undefined,
    });
    const timeoutMs = Math.min(
      this.deps.config.botTimeoutMs,
      typeof bot.timeout === 'number' && bot.timeout > 0 ? bot.timeout * 1000 : Infinity,
    );
    const { tracer, metrics } = this.deps.telemetry ?? {};
    const outcome = await inSpan(
      tracer,
      `bot ${botRef}`,
      { [ATTR.bot]: botRef, [ATTR.project]: projectId },
      async (span) => {
        const ran = await this.deps.sandbox.run({
          poolKey: botRef,
          codeKey: code.key,
          code: code.script,
          event,
          host,
          timeoutMs,
          fhirBase: this.fhirBase(),
          baseUrl: this.deps.config.baseUrl,
        });
        if (span && !ran.ok) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: ran.reason });
        }
        return ran;
      },
    );
    metrics?.botRunDuration.observe({ outcome: outcome.ok ? 'ok' : outcome.reason }, outcome.durationMs / 1000);
    const result: BotRunResult = outcome.ok
      ? { ok: true, value: outcome.value, logs: outcome.logs, traceId, durationMs: outcome.durationMs }
      : {
          ok: false,
          reason: outcome.reason,
          message: outcome.message,
          logs: outcome.logs,
          traceId,
          durationMs: outcome.durationMs,
        };
    result.auditEventId = this.audit(bot, projectId, request, result, start);
    return result;
  }

  /** A bot by "Bot/{id}" or by identifier "system|value", readable by `repo`. */
  async resolve(repo: Repository, target: string): Promise<Bot> {
    const byId = /^Bot\/([A-Za-z0-9\-.]{1,64})$/.exec(target);
    if (byId) {
      return (await repo.readResource<Resource>('Bot', byId[1])).resource as unknown as Bot;
    }
    const ids = await repo.findMatches('Bot', `identifier=${encodeURIComponent(target)}`, 2);
    if (ids.length !== 1) {
      fail(badRequest(ids.length === 0 ? `No bot has identifier ${target}` : `Several bots have identifier ${target}`));
    }
    return (await repo.readResource<Resource>('Bot', ids[0])).resource as unknown as Bot;
  }

  private audit(
    bot: Bot,
    projectId: string,
    request: BotRunRequest,
    result: BotRunResult,
    start: Date,
  ): string | undefined {
    const trigger = bot.auditEventTrigger ?? 'always';
    const hasOutput = result.logs.length > 0;
    if (
      trigger === 'never' ||
      (trigger === 'on-error' && result.ok) ||
      (trigger === 'on-output' && !hasOutput && result.ok)
    ) {
      return undefined;
    }
    const lines = result.logs.map((l) => (l.level === 'info' ? l.message : `[${l.level}] ${l.message}`));
    if (!result.ok) {
      lines.push(`Error: ${result.message}`);
    }
    const description = lines.join('\n');
    const destinations = bot.auditEventDestination ?? ['resource'];
    if (destinations.includes('log')) {
      this.deps.logger.info(
        { bot: `Bot/${bot.id}`, ok: result.ok, traceId: result.traceId, output: description },
        'bot run',
      );
    }
    if (!destinations.includes('resource')) {
      return undefined;
    }
    return this.deps.audits.record(projectId, {
      kind: 'bot-execute',
      agent: `Bot/${bot.id}`,
      entities: [`Bot/${bot.id}`, ...(request.entities ?? [])],
      success: result.ok,
      description,
      start,
      end: new Date(),
      traceId: result.traceId,
    });
  }
}
