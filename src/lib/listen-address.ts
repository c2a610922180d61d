/**
 * Whether a listen address is reachable only from this host: the config check, `pgvigil check`
 * and the HTTP app all decide by it whether the API may go without a token.
 */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
