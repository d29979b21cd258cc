/**
 * The documentation routes the spec seed lists (/work/shared/seed: "Docs routes under /docs/",
 * "API and SDK routes", "Guide groups"), as paths under /docs/. The per-type reference pages
 * (api/fhir/resources/{type}) and the SDK pages (sdk/core.{name}) are listed by the tests from
 * the definitions and the SDK's exports. The seed's "fhir medplum" pages (the anchor's own
 * resource types) are Hearth's platform resources: api/fhir/platform.
 */
export const SEED_DOC_ROUTES = [
  'getting-started',
  'fhir-basics',
  'tutorials',
  'app',
  'auth',
  'access',
  'administration',
  'questionnaires',
  'careplans',
  'charting',
  'scheduling',
  'communications',
  'labs-imaging',
  'medications',
  'billing',
  'fhircast',
  'bots',
  'subscriptions',
  'cli',
  'agent',
  'fhir-datastore',
  'search',
  'graphql',
  'react',
  'integration',
  'analytics',
  'rate-limits',
  'self-hosting',
  'contributing',
  'compliance',
];

export const SEED_GUIDE_GROUP_ROUTES = [
  'search/basic',
  'search/advanced',
  'search/chained',
  'search/filter',
  'search/includes',
  'search/pagination',
  'self-hosting/aws',
  'self-hosting/ubuntu',
  'self-hosting/docker',
  'self-hosting/config-settings',
  'self-hosting/cors',
  'self-hosting/super-admin',
  'self-hosting/database-upgrade',
  'self-hosting/load-testing',
  'self-hosting/opentelemetry',
  'self-hosting/datadog',
  'self-hosting/smtp',
  'subscriptions/notifications',
  'subscriptions/websockets',
  'tutorials/register',
  'tutorials/hello-world',
  'tutorials/sample-data',
];

export const SEED_API_ROUTES = [
  'api',
  'api/project-admin',
  'api/fhir/resources',
  'api/fhir/datatypes',
  'api/fhir/platform',
  'api/fhir/operations',
  'api/oauth',
  'api/oauth/authorize',
  'api/oauth/token',
  'api/oauth/userinfo',
  'api/scim',
  'api/scim/users',
  'api/react',
  'sdk',
];

/** Every route above: the guides are written by hand, so each must have its page. */
export const SEED_ROUTES = [...SEED_DOC_ROUTES, ...SEED_GUIDE_GROUP_ROUTES, ...SEED_API_ROUTES];
