// The Hearth documentation site. Served by the Hearth server at /docs/ (apps/server/src/docs-static),
// hence baseUrl '/docs/' and the docs at the site's root. `npm run docs` builds it.
import { themes as prismThemes } from 'prism-react-renderer';
import searchLocal from '@easyops-cn/docusaurus-search-local';

/**
 * The local search theme, whose results page would take /search: the route of the Search guide
 * (a seed route). The page moves to /search-results; src/search-redirect.js sends the search
 * bar's "see all results" there.
 */
function localSearch(context, options) {
  const plugin = searchLocal.default(context, options);
  return {
    ...plugin,
    contentLoaded(args) {
      const addRoute = (route) =>
        args.actions.addRoute({ ...route, path: route.path.replace(/search$/, 'search-results') });
      return plugin.contentLoaded({ ...args, actions: { ...args.actions, addRoute } });
    },
  };
}
localSearch.validateOptions = searchLocal.validateOptions;

/** @type {import('@docusaurus/types').Config} */
export default {
  title: 'Hearth',
  tagline: 'A self-hostable FHIR R4 platform',
  url: process.env.HEARTH_DOCS_URL ?? 'http://localhost:8103',
  baseUrl: '/docs/',
  trailingSlash: false,
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  onDuplicateRoutes: 'throw',
  markdown: {
    // .md is CommonMark (generated pages and the guides GitHub shows), .mdx would be MDX.
    format: 'detect',
    hooks: { onBrokenMarkdownLinks: 'throw', onBrokenMarkdownImages: 'throw' },
  },
  i18n: { defaultLocale: 'en', locales: ['en'] },
  presets: [
    [
      'classic',
      /** @type {import('@docusaurus/preset-classic').Options} */
      ({
        docs: {
          path: 'content',
          routeBasePath: '/',
          sidebarPath: './sidebars.mjs',
          // Versioned with `npx docusaurus docs:version <version>` (CONTRIBUTING: Documentation).
          includeCurrentVersion: true,
        },
        blog: false,
        pages: false,
        theme: { customCss: './src/css/custom.css' },
      }),
    ],
  ],
  themes: [
    [
      localSearch,
      /** @type {import('@easyops-cn/docusaurus-search-local').PluginOptions} */
      ({
        hashed: true,
        indexDocs: true,
        indexBlog: false,
        indexPages: false,
        docsRouteBasePath: '/',
        docsDir: 'content',
        language: ['en'],
        highlightSearchTermsOnTargetPage: false,
        explicitSearchResultPath: false,
      }),
    ],
  ],
  clientModules: ['./src/search-redirect.js'],
  themeConfig: {
    navbar: {
      title: 'Hearth',
      items: [
        { type: 'docSidebar', sidebarId: 'docs', position: 'left', label: 'Guides' },
        { type: 'docSidebar', sidebarId: 'api', position: 'left', label: 'API' },
        { type: 'docSidebar', sidebarId: 'sdk', position: 'left', label: 'SDK' },
        { type: 'search', position: 'right' },
        { href: 'pathname:///', label: 'App', position: 'right' },
      ],
    },
    footer: {
      style: 'dark',
      copyright: 'Hearth, Apache-2.0. Generated from the repository at build time.',
    },
    prism: { theme: prismThemes.github, darkTheme: prismThemes.dracula, additionalLanguages: ['bash', 'json'] },
  },
};
