/** proxy-from-env 2.x ships no types: its one export (index.js). */
declare module 'proxy-from-env' {
  /** The proxy URL for `url` from *_PROXY, ALL_PROXY and NO_PROXY in process.env; '' for a direct request. */
  export function getProxyForUrl(url: string | URL): string;
}
