import { configSchema, type ConfigKey } from './schema.js';

function formatDefault(spec: ConfigKey<unknown>): string {
  const value = spec.default;
  if (value === '' || (Array.isArray(value) && value.length === 0)) {
    return '(empty)';
  }
  return '`' + (Array.isArray(value) ? value.join(',') : String(value)) + '`';
}

/**
 * The configuration reference page (docs/config.md), rendered from the one declaration of every
 * key in schema.ts. `npm run docs:config` writes it; a test fails when the committed page differs.
 */
export function renderConfigReference(schema: Record<string, ConfigKey<unknown>> = configSchema): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from apps/server/src/config/schema.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'Hearth reads its configuration once at start, in this order (later wins):',
    '',
    '1. the defaults below;',
    '2. the JSON file named by the `HEARTH_CONFIG_FILE` environment variable, if set: an object whose keys',
    '   are the names below (`{ "port": 8080, "corsOrigins": ["https://app.example.org"] }`); an unknown key',
    '   or a value of the wrong type stops the server at start;',
    '3. environment variables (an empty variable counts as unset).',
    '',
    'Types: `integer`; `boolean` (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`); `string[]` (comma',
    'separated in an environment variable, an array in the JSON file). Settings marked secret are never',
    'logged.',
    '',
    '| Environment variable | JSON key | Type | Default | Description |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [name, spec] of Object.entries(schema)) {
    const description = spec.description.replace(/\|/g, '\\|') + (spec.secret ? ' **Secret.**' : '');
    lines.push(`| \`${spec.env}\` | \`${name}\` | ${spec.type} | ${formatDefault(spec)} | ${description} |`);
  }
  lines.push('');
  return lines.join('\n');
}
