/**
 * hearth get | post | put | patch | delete <path> [body] and hearth search <type> [params...]:
 * any endpoint through the SDK, answers as pretty JSON on stdout, errors as the server's
 * OperationOutcome on stderr with a non-zero exit code.
 */
import type { Command } from 'commander';
import { getDisplayString, OperationOutcomeError, type Bundle, type Resource, type ResourceType } from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import { contentTypeOf, isJsonType, parseHeaders, parseJson, readSource } from '../input.js';
import { CliError, EXIT_FAILURE, ExitError, formatTable, info, printBody, printJson } from '../output.js';

/** Paths of the platform (not FHIR): resolved against the server's base URL rather than the FHIR base. */
const PLATFORM_PATHS = /^(admin|auth|oauth2|fhir|scim|api|ws|\.well-known)(\/|$)|^(healthcheck|openapi\.json)(\?|$)/;

/**
 * The URL a command-line path stands for: an absolute URL as is; a platform path ('auth/me',
 * 'admin/projects/1', 'fhir/R4/Patient') under the base URL; anything else under the FHIR base
 * ('Patient/123', 'Patient?name=x', '$export').
 */
export function resolvePath(hearth: CliClient, path: string): string {
  if (/^https?:\/\//i.test(path)) {
    return path;
  }
  const relative = path.replace(/^\/+/, '');
  if (PLATFORM_PATHS.test(relative)) {
    return hearth.getBaseUrl() + relative;
  }
  return hearth.getFhirBaseUrl() + relative;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

interface RestOptions extends GlobalOptions {
  header: string[];
  contentType?: string;
}

/** Runs a request; an error answer prints its OperationOutcome (JSON) on stderr and exits 1. */
async function request(send: () => Promise<unknown>): Promise<void> {
  let body: unknown;
  try {
    body = await send();
  } catch (err) {
    if (err instanceof OperationOutcomeError) {
      info(JSON.stringify(err.outcome, null, 2));
      throw new ExitError(EXIT_FAILURE);
    }
    throw err;
  }
  printBody(body);
}

/** The body of a write and its content type: JSON is checked here, before it goes anywhere. */
async function bodyOf(
  source: string,
  contentType: string | undefined,
  fallback: string,
): Promise<{ body: string | Buffer; type: string }> {
  const { bytes, filename } = await readSource(source);
  const type =
    contentType ?? (filename && !filename.endsWith('.json') ? contentTypeOf(filename) : undefined) ?? fallback;
  if (isJsonType(type)) {
    parseJson(bytes, filename ?? 'The body');
    return { body: bytes.toString('utf8'), type };
  }
  return { body: bytes, type };
}

export function registerRestCommands(program: Command): void {
  const withCommon = (command: Command) =>
    command
      .option('-H, --header <header>', "an extra request header 'Name: value' (repeatable)", collect, [])
      .addHelpText(
        'after',
        '\nPaths: FHIR paths (Patient/123, Patient?name=smith, $export) are below the FHIR base;\n' +
          'platform paths (auth/me, admin/projects/{id}, fhir/R4/..., healthcheck) and absolute URLs are used as they are.',
      );

  withCommon(program.command('get').argument('<path>', 'FHIR or platform path').description('GET a path')).action(
    async (path: string, _options, command: Command) => {
      const options = command.optsWithGlobals<RestOptions>();
      const { hearth } = await connect(options);
      const headers = parseHeaders(options.header);
      await request(() => hearth.get(resolvePath(hearth, path), { headers, cache: 'no-cache' }));
    },
  );

  for (const method of ['post', 'put', 'patch'] as const) {
    const fallback = method === 'patch' ? 'application/json-patch+json' : 'application/fhir+json';
    withCommon(
      program
        .command(method)
        .argument('<path>', 'FHIR or platform path')
        .argument('[body]', "the body: a file, '-' for stdin, or inline JSON")
        .option('--content-type <type>', `the body's content type (default: from the file name, else ${fallback})`)
        .description(`${method.toUpperCase()} a body (from a file, stdin or inline JSON) to a path`),
    ).action(async (path: string, source: string | undefined, _options, command: Command) => {
      const options = command.optsWithGlobals<RestOptions>();
      if (source === undefined && method !== 'post') {
        throw new CliError(`${method} needs a body: a file, '-' for stdin, or inline JSON`);
      }
      const { hearth } = await connect(options);
      const headers = parseHeaders(options.header);
      const url = resolvePath(hearth, path);
      const { body, type } =
        source === undefined
          ? { body: undefined, type: undefined }
          : await bodyOf(source, options.contentType, fallback);
      await request(() => hearth[method](url, body, type, { headers }));
    });
  }

  withCommon(program.command('delete').argument('<path>', 'FHIR or platform path').description('DELETE a path')).action(
    async (path: string, _options, command: Command) => {
      const options = command.optsWithGlobals<RestOptions>();
      const { hearth } = await connect(options);
      const headers = parseHeaders(options.header);
      await request(() => hearth.delete(resolvePath(hearth, path), { headers }));
    },
  );

  program
    .command('search')
    .description('Search a resource type; prints a table (id, lastUpdated, display) or JSON')
    .argument('<type>', 'resource type, e.g. Patient')
    .argument('[params...]', "search parameters: name=smith birthdate=gt2000 _count=50 (or one 'a=1&b=2')")
    .option('--json', 'print the searchset Bundle')
    .option('--ndjson', 'print the matching resources, one JSON per line')
    .option('--all', 'follow the next links and print every page')
    .action(
      async (
        type: string,
        params: string[],
        options: { json?: boolean; ndjson?: boolean; all?: boolean },
        command: Command,
      ) => {
        const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
        await search(hearth, type, params, options);
      },
    );
}

export function searchQuery(params: string[]): URLSearchParams {
  const query = new URLSearchParams();
  for (const param of params) {
    for (const [key, value] of new URLSearchParams(param.replace(/^\?/, ''))) {
      if (!key) {
        throw new CliError(`Invalid search parameter '${param}': expected name=value`);
      }
      query.append(key, value);
    }
  }
  return query;
}

async function search(
  hearth: CliClient,
  type: string,
  params: string[],
  options: { json?: boolean; ndjson?: boolean; all?: boolean },
): Promise<void> {
  if (!/^[A-Z][A-Za-z]+$/.test(type)) {
    throw new CliError(`Invalid resource type '${type}'`);
  }
  const query = searchQuery(params);
  const matches: Resource[] = [];
  let first: Bundle | undefined;
  let next: string | undefined;
  try {
    if (options.all) {
      for await (const page of hearth.searchResourcePages(type as ResourceType, query, { cache: 'no-cache' })) {
        first ??= page.bundle as Bundle;
        matches.push(...(page as Resource[]));
      }
    } else {
      first = (await hearth.search(type as ResourceType, query, { cache: 'no-cache' })) as Bundle;
      matches.push(
        ...(first.entry ?? [])
          .filter((e) => e.resource && (e.search?.mode ?? 'match') === 'match')
          .map((e) => e.resource as Resource),
      );
      next = first.link?.find((l) => l.relation === 'next')?.url;
    }
  } catch (err) {
    if (err instanceof OperationOutcomeError && options.json) {
      info(JSON.stringify(err.outcome, null, 2));
      throw new ExitError(EXIT_FAILURE);
    }
    throw err;
  }
  if (options.json) {
    printJson(
      options.all
        ? {
            resourceType: 'Bundle',
            type: 'searchset',
            total: first?.total ?? matches.length,
            entry: matches.map((resource) => ({ resource })),
          }
        : first,
    );
    return;
  }
  if (options.ndjson) {
    process.stdout.write(matches.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return;
  }
  const rows = matches.map((r) => [r.id ?? '', r.meta?.lastUpdated ?? '', getDisplayString(r as never)]);
  if (rows.length > 0) {
    console.log(formatTable(['id', 'lastUpdated', 'display'], rows));
  }
  const total = first?.total !== undefined ? ` of ${first.total}` : '';
  info(`${matches.length}${total} ${type}${next ? ' (more: add --all, or _count=n)' : ''}`);
}
