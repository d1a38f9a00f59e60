/** `value` as a URL when it is an absolute http:// or https:// URL, otherwise `undefined`. */
export function parseHttpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}
