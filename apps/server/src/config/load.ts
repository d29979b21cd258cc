import { readFileSync } from 'node:fs';
import { configSchema, type Config, type ConfigKey } from './schema.js';

/**
 * Builds the configuration: defaults, then the optional JSON file (HEARTH_CONFIG_FILE),
 * then environment variables, then explicit overrides (tests). Unknown or ill-typed values fail start-up.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const config = {} as Record<string, unknown>;
  const fromFile = env.HEARTH_CONFIG_FILE ? readConfigFile(env.HEARTH_CONFIG_FILE) : {};
  for (const [name, spec] of Object.entries(configSchema) as [keyof Config, ConfigKey<unknown>][]) {
    let value: unknown = spec.default;
    if (name in fromFile) {
      value = coerce(name, spec, fromFile[name]);
    }
    const raw = env[spec.env];
    if (raw !== undefined && raw !== '') {
      value = coerce(name, spec, raw);
    }
    if (name in overrides) {
      value = overrides[name];
    }
    config[name] = value;
  }
  const result = config as Config;
  if (!result.baseUrl) {
    result.baseUrl = `http://localhost:${result.port}/`;
  }
  if (!result.baseUrl.endsWith('/')) {
    result.baseUrl += '/';
  }
  return result;
}

function readConfigFile(path: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`Config file ${path} must hold a JSON object`);
  }
  for (const name of Object.keys(parsed)) {
    if (!(name in configSchema)) {
      throw new Error(`Config file ${path}: unknown key "${name}"`);
    }
  }
  return parsed as Record<string, unknown>;
}

function coerce(name: string, spec: ConfigKey<unknown>, raw: unknown): unknown {
  switch (spec.type) {
    case 'integer': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isInteger(n)) {
        throw new Error(`Config ${name} (${spec.env}) must be an integer, got "${String(raw)}"`);
      }
      return n;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') {
        return raw;
      }
      const s = String(raw).trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) {
        return true;
      }
      if (['0', 'false', 'no', 'off'].includes(s)) {
        return false;
      }
      throw new Error(`Config ${name} (${spec.env}) must be a boolean, got "${String(raw)}"`);
    }
    case 'string[]':
      if (Array.isArray(raw)) {
        return raw.map(String);
      }
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return String(raw);
  }
}

/** The configuration with secrets masked, safe to log. */
export function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(configSchema) as [keyof Config, ConfigKey<unknown>][]) {
    out[name] = spec.secret && config[name] ? '***' : config[name];
  }
  return out;
}
