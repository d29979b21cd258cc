import { createHash } from 'node:crypto';
import { transform, type Message } from 'esbuild';
import { badRequest, fail, notFoundWith, type Attachment, type Resource } from '@hearth/core';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import { storageKeyOf, withStorageKey } from '../storage/binary-key.js';

/** The module format bots are written in and stored as (the spec's Bot executableCode). */
export const BOT_CODE_CONTENT_TYPE = 'application/javascript';

const TS_EXTENSIONS = /\.(ts|mts|cts|tsx)$/i;

function describe(errors: Message[]): string {
  return errors
    .map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ${e.text}` : e.text))
    .join('; ');
}

/**
 * Compiles bot source (TypeScript or JavaScript, by file name or content type) to an ES module.
 * Type errors are not checked here (that is the editor's job); syntax errors are a 400.
 */
export async function compileBotSource(source: string, filename: string, contentType?: string): Promise<string> {
  const typescript = TS_EXTENSIONS.test(filename) || /typescript/i.test(contentType ?? '');
  try {
    const result = await transform(source, {
      loader: typescript ? (filename.endsWith('x') ? 'tsx' : 'ts') : 'js',
      format: 'esm',
      target: 'es2022',
      sourcefile: filename,
      sourcemap: false,
    });
    return result.code;
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    fail(badRequest(`Bot code does not compile: ${errors ? describe(errors) : String(err)}`, 'code'));
  }
}

const sandboxScripts = new Map<string, string>();
const MAX_CACHED_SCRIPTS = 500;

/**
 * The stored ES module as the script the sandbox runs: CommonJS inside a function the sandbox's
 * prelude calls with its own `exports`, `module` and a `require` that refuses every module.
 * Cached by content hash (esbuild takes about a millisecond, the cache makes warm runs free).
 */
export async function toSandboxScript(moduleCode: string): Promise<{ key: string; script: string }> {
  const key = createHash('sha256').update(moduleCode).digest('base64url');
  const cached = sandboxScripts.get(key);
  if (cached !== undefined) {
    return { key, script: cached };
  }
  let cjs: string;
  try {
    cjs = (await transform(moduleCode, { loader: 'js', format: 'cjs', target: 'es2022', sourcefile: 'bot.js' })).code;
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    fail(badRequest(`Deployed bot code does not parse: ${errors ? describe(errors) : String(err)}`));
  }
  const script = `globalThis.__hearthModule = function (exports, require, module) {\n${cjs}\n};`;
  if (sandboxScripts.size >= MAX_CACHED_SCRIPTS) {
    sandboxScripts.delete(sandboxScripts.keys().next().value as string);
  }
  sandboxScripts.set(key, script);
  return { key, script };
}

/** Reads the content an Attachment holds: inline `data`, or a `Binary/{id}` url readable in `repo`. */
export async function readAttachmentText(
  repo: Repository,
  store: BinaryStore,
  attachment: Attachment | undefined,
  field: string,
): Promise<string> {
  if (!attachment) {
    fail(badRequest(`${field} is missing`, field));
  }
  if (typeof attachment.data === 'string') {
    return Buffer.from(attachment.data, 'base64').toString('utf8');
  }
  const binaryId = binaryIdOf(attachment.url);
  if (!binaryId) {
    fail(badRequest(`${field} must carry data or a url of the form Binary/{id}`, `${field}.url`));
  }
  const { resource } = await repo.readResource('Binary', binaryId);
  return readBinaryText(store, resource);
}

/** A stored Binary's content as text (inline data or its content file). */
export async function readBinaryText(store: BinaryStore, binary: Resource): Promise<string> {
  const inline = (binary as { data?: unknown }).data;
  if (typeof inline === 'string') {
    return Buffer.from(inline, 'base64').toString('utf8');
  }
  const key = storageKeyOf(binary);
  if (!key) {
    fail(notFoundWith(`Binary/${binary.id} has no content`));
  }
  const { stream } = await store.open(key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The id in "Binary/{id}" or ".../Binary/{id}" (absolute urls to this server included). */
export function binaryIdOf(url: string | undefined): string | undefined {
  const m = /(?:^|\/)Binary\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/\d+)?$/.exec(url ?? '');
  return m?.[1];
}

/** Stores code as a new Binary (its content in the binary store) and returns the Attachment naming it. */
export async function storeCode(
  repo: Repository,
  store: BinaryStore,
  code: string,
  filename: string,
  contentType = BOT_CODE_CONTENT_TYPE,
): Promise<Attachment> {
  const { key, size } = await store.write(Buffer.from(code, 'utf8'));
  let binary: Resource;
  try {
    binary = (await repo.createResource(withStorageKey({ resourceType: 'Binary', contentType }, key))).resource;
  } catch (err) {
    await store.remove(key);
    throw err;
  }
  return {
    contentType,
    url: `Binary/${binary.id}`,
    title: filename,
    size,
    hash: createHash('sha1').update(code).digest('base64'),
  };
}
