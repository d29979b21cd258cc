/**
 * The sidebars, in the shape of the seed's: items of type doc, category, link and html. `docs`
 * holds the guides, `api` the generated reference, `sdk` the SDK reference.
 */
import { slug } from './reference.js';

type Item =
  | string
  | { type: 'doc'; id: string; label?: string }
  | { type: 'link'; label: string; href: string }
  | { type: 'html'; value: string; defaultStyle?: boolean }
  | { type: 'category'; label: string; link?: { type: 'doc'; id: string }; collapsed?: boolean; items: Item[] };

const heading = (text: string): Item => ({
  type: 'html',
  value: `<span class="sidebar-heading">${text}</span>`,
  defaultStyle: true,
});
const category = (label: string, index: string | undefined, items: Item[], collapsed = true): Item => ({
  type: 'category',
  label,
  ...(index ? { link: { type: 'doc' as const, id: index } } : {}),
  collapsed,
  items,
});

/** The guide pages, in reading order. Every id here must be a file under docs/ (the build checks). */
export const GUIDE_SIDEBAR: Item[] = [
  'index',
  'getting-started',
  'fhir-basics',
  category('Tutorials', 'tutorials/index', ['tutorials/register', 'tutorials/hello-world', 'tutorials/sample-data']),
  heading('Platform'),
  'app',
  'auth',
  'access',
  'administration',
  'fhir-datastore',
  category('Search', 'search/index', [
    'search/basic',
    'search/advanced',
    'search/chained',
    'search/filter',
    'search/includes',
    'search/pagination',
  ]),
  'graphql',
  heading('Automation'),
  'bots',
  category('Subscriptions', 'subscriptions/index', ['subscriptions/websockets', 'subscriptions']),
  'cli',
  'agent',
  heading('Clinical workflows'),
  'questionnaires',
  'careplans',
  'charting',
  'scheduling',
  'communications',
  'labs-imaging',
  'medications',
  'billing',
  'fhircast',
  heading('Building on Hearth'),
  'react',
  'integration',
  'analytics',
  'measures',
  'rate-limits',
  'compliance',
  heading('Running Hearth'),
  category('Self-hosting', 'self-hosting/index', [
    'self-hosting/ubuntu',
    'self-hosting/docker',
    'self-hosting/aws',
    'config',
    'self-hosting/cors',
    'self-hosting/super-admin',
    'self-hosting/database-upgrade',
    'self-hosting/backups',
    'database',
    'self-hosting/load-testing',
    'self-hosting/opentelemetry',
    'self-hosting/datadog',
    'self-hosting/smtp',
    'reliability',
  ]),
  category('Contributing', 'contributing', ['adr/storage-layout', 'adr/search-index', 'adr/automation']),
  { type: 'link', label: 'FHIR R4 specification', href: 'https://hl7.org/fhir/R4/' },
];

export function buildSidebars(names: {
  resources: string[];
  platform: string[];
  datatypes: string[];
  sdk: string[];
}): Record<string, Item[]> {
  const platform = new Set(names.platform);
  const resourceDoc = (n: string): Item => ({ type: 'doc', id: `api/fhir/resources/${slug(n)}`, label: n });
  return {
    docs: GUIDE_SIDEBAR,
    api: [
      'api/index',
      'api/project-admin',
      category('OAuth 2.0', 'api/oauth/index', ['api/oauth/authorize', 'api/oauth/token', 'api/oauth/userinfo']),
      category('SCIM 2.0', 'api/scim/index', ['api/scim/users']),
      'operations',
      'api/react',
      heading('FHIR reference'),
      category('Platform resources', 'api/fhir/platform', names.platform.map(resourceDoc)),
      category(
        'FHIR resources',
        'api/fhir/resources/index',
        names.resources.filter((n) => !platform.has(n)).map(resourceDoc),
      ),
      category(
        'Data types',
        'api/fhir/datatypes/index',
        names.datatypes.map((n) => ({ type: 'doc' as const, id: `api/fhir/datatypes/${slug(n)}`, label: n })),
      ),
      { type: 'link', label: 'CapabilityStatement (live)', href: 'pathname:///fhir/R4/metadata' },
    ],
    sdk: [
      'sdk/index',
      'sdk/core.fhir-types',
      ...names.sdk.map((n) => ({ type: 'doc' as const, id: `sdk/core.${n}`, label: n })),
    ],
  };
}
