/**
 * Containers cannot run here, so the Dockerfile stays a thin layer over the release that
 * release.test.ts runs: this reads the Dockerfile and docker-compose.yml and checks that they build
 * that release, start it with its own start script, and use the port, health check path and
 * setting names the release test used.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../apps/server/src/config/schema.js';
import { DEFAULT_PORT, HEALTHCHECK_PATH, RELEASE_ENV, START_SCRIPT } from './harness.js';
import { releaseNames, ROOT } from './release.mjs';

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions: comments dropped, continued lines joined. */
function dockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!current && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  return logical.map((line) => {
    const [keyword] = line.split(/\s+/, 1);
    return { keyword: keyword.toUpperCase(), args: line.slice(keyword.length).trim() };
  });
}

/** `KEY=value KEY2=value` (the ENV form used) as pairs. */
function envPairs(args: string): [string, string][] {
  return args.split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]);
}

const instructions = dockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const stages: Instruction[][] = [];
for (const instruction of instructions) {
  if (instruction.keyword === 'FROM') stages.push([]);
  stages[stages.length - 1]?.push(instruction);
}
const [buildStage, finalStage] = [stages[0], stages[stages.length - 1]];
const all = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword);
const one = (stage: Instruction[], keyword: string) => {
  const found = all(stage, keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0].args;
};
const imageEnv = new Map(all(finalStage, 'ENV').flatMap((i) => envPairs(i.args)));
const knownSettings = new Set(Object.values(configSchema).map((k) => k.env));

interface ComposeService {
  build?: unknown;
  image?: string;
  environment?: Record<string, string | number>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, unknown>;
}
const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};

describe('Dockerfile', () => {
  it('builds the release in its first stage, with npm ci and npm run release', () => {
    expect(stages.length).toBe(2);
    const run = all(buildStage, 'RUN')
      .map((i) => i.args)
      .join(' && ');
    expect(run).toMatch(/(^|&& )npm ci( |$)/);
    expect(run).toContain('npm run release');
    // It unpacks the tarball npm run release names (hearth-<version>-<os>-<cpu>.tgz, one folder).
    const names = releaseNames('VERSION', 'OS', 'CPU');
    expect(names.tarball.replace('VERSION-OS-CPU', '*')).toBe('hearth-*.tgz');
    expect(run).toContain(`release/${names.tarball.replace('VERSION-OS-CPU', '*')}`);
  });

  it('ships it on node:20-bookworm-slim, built on the same Debian and Node.js major', () => {
    expect(one(finalStage, 'FROM')).toBe('node:20-bookworm-slim');
    const builder = one(buildStage, 'FROM').split(/\s+/)[0];
    expect(builder).toBe('node:20-bookworm');
    // The release refuses another Node.js major (its native modules): both stages have one major.
    expect(builder.split(':')[1].split('-')[0]).toBe(finalStage[0].args.split(':')[1].split('-')[0]);
  });

  it('runs the release’s start script as a user that is not root', () => {
    const copy = one(finalStage, 'COPY');
    const installed = copy.split(/\s+/).pop() as string;
    expect(copy).toMatch(/^--from=\S+ /);
    const cmd = JSON.parse(one(finalStage, 'CMD')) as string[];
    expect(cmd).toEqual([`${installed}/${START_SCRIPT}`]);
    const user = one(finalStage, 'USER');
    expect(['root', '0', '']).not.toContain(user);
  });

  it('listens on, exposes and health-checks the port and path the release test used', () => {
    expect(Number(imageEnv.get(RELEASE_ENV.port))).toBe(DEFAULT_PORT);
    expect(Number(one(finalStage, 'EXPOSE'))).toBe(DEFAULT_PORT);
    expect(imageEnv.get(RELEASE_ENV.host)).toBe('0.0.0.0'); // reachable from outside the container
    const healthcheck = one(finalStage, 'HEALTHCHECK');
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    const script = command.join(' ');
    expect(script).toContain(`'${HEALTHCHECK_PATH}'`);
    expect(script).toContain(`process.env.${RELEASE_ENV.port} || ${DEFAULT_PORT}`);
    expect(command[0]).toBe('node'); // the slim image has no curl
  });

  it('sets only settings the server knows, and keeps the data directory on a volume', () => {
    for (const name of imageEnv.keys()) expect(knownSettings, name).toContain(name);
    const dataDir = imageEnv.get(RELEASE_ENV.dataDir);
    expect(dataDir).toBeDefined();
    expect(JSON.parse(one(finalStage, 'VOLUME'))).toEqual([dataDir]);
  });
});

describe('docker-compose.yml', () => {
  const hearth = Object.values(compose.services).find((s) => s.build !== undefined) as ComposeService;
  const postgres = Object.entries(compose.services).find(([, s]) => s.image?.startsWith('postgres:'));

  it('builds the Dockerfile and runs it beside PostgreSQL 16 on a volume', () => {
    expect(hearth).toBeDefined();
    expect(postgres?.[1].image).toBe('postgres:16');
    expect(postgres?.[1].volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(Object.keys(hearth.depends_on ?? {})).toEqual([postgres?.[0]]);
  });

  it('gives Hearth the settings the release test used, by the same names, pointing at that PostgreSQL', () => {
    const env = hearth.environment ?? {};
    for (const name of Object.keys(env)) expect(knownSettings, name).toContain(name);
    const url = new URL(String(env[RELEASE_ENV.databaseUrl]).replace(/\$\{(\w+):-([^}]*)\}/g, '$2'));
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe(postgres?.[0]);
    expect(env[RELEASE_ENV.baseUrl]).toBeDefined();
    expect(Number(env[RELEASE_ENV.port])).toBe(DEFAULT_PORT);
  });

  it('publishes the port the image listens on and keeps its data directory on a volume', () => {
    expect(hearth.ports?.map((p) => Number(p.split(':').pop()))).toEqual([DEFAULT_PORT]);
    expect(hearth.volumes?.map((v) => v.split(':')[1])).toEqual([imageEnv.get(RELEASE_ENV.dataDir)]);
  });
});
