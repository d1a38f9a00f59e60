/**
 * System error codes raised before a connection exists: no byte of the request reached the server, so sending again
 * cannot repeat anything.
 */
export const NOT_CONNECTED_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);

/** The `code` of a system error, when it looks like one (`ECONNRESET`); never any other property of the error. */
export function systemErrorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : undefined;
}
