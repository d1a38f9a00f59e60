/** What a hidden part of a URL reads as, in the output of the command line. */
const HIDDEN = 'redacted';

/**
 * The URL as a command may print it: the user name and password dropped, every query value and the fragment shown as
 * `redacted` (a query part without `=`, which may be a secret in itself, too), the names of the query parameters kept.
 */
export function urlWithoutSecrets(url: URL): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  if (shown.search !== '') shown.search = queryWithoutSecrets(shown.search.slice(1));
  if (shown.hash !== '') shown.hash = HIDDEN;
  return shown.href;
}

/** `urlWithoutSecrets()` of a text that parses as a URL of any scheme, else `undefined`. */
export function urlTextWithoutSecrets(text: string): string | undefined {
  return URL.canParse(text) ? urlWithoutSecrets(new URL(text)) : undefined;
}

/** The parts of a query a reply may echo and a command must hide, decoded: every value, and every part without `=`. */
export function querySecrets(url: URL): string[] {
  return url.search
    .slice(1)
    .split('&')
    .map((part) => {
      const [name = '', value = ''] = [...new URLSearchParams(part)][0] ?? [];
      return part.includes('=') ? value : name;
    })
    .filter((secret) => secret !== '');
}

function queryWithoutSecrets(query: string): string {
  return query
    .split('&')
    .map((part) => (part.includes('=') ? `${part.slice(0, part.indexOf('='))}=${HIDDEN}` : part === '' ? '' : HIDDEN))
    .join('&');
}
