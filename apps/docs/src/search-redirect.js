// The search bar's "see all results" goes to {baseUrl}search/?q=…, which on this site is the
// Search guide: a query there is sent on to the results page (docusaurus.config.js, localSearch).
export function onRouteDidUpdate({ location }) {
  const params = new URLSearchParams(location.search);
  if (/\/search\/?$/.test(location.pathname) && params.has('q')) {
    window.location.replace(`${location.pathname.replace(/\/search\/?$/, '/search-results')}${location.search}`);
  }
}
