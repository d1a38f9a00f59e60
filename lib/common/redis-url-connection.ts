/** Redis connection options, as both bullmq 5 and 6 take them, read from a `redis://` or `rediss://` URL. */
export interface RedisUrlConnection {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
}

/**
 * The connection options of `url`, or `undefined` when it is no Redis URL: another scheme, no host, a database that is
 * not a number, or a user name or password that is not valid percent-encoding.
 */
export function redisUrlConnection(url: string): RedisUrlConnection | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if ((parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || parsed.hostname === '') return undefined;
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) return undefined;
  const username = decoded(parsed.username);
  const password = decoded(parsed.password);
  if (username === undefined || password === undefined) return undefined;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(username !== '' && { username }),
    ...(password !== '' && { password }),
    ...(db !== '' && { db: Number(db) }),
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
  };
}

function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** `host:port` of a connection, what the command shows of it: never the credentials. */
export function describeConnection({ host, port }: RedisUrlConnection): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Hides the connection's user name and password in a line of output, whatever an error message echoes. */
export function connectionSecretsHidden({ username, password }: RedisUrlConnection): (line: string) => string {
  const secrets = [password, username].filter((value): value is string => value !== undefined && value.length >= 4);
  return (line) => secrets.reduce((shown, secret) => shown.split(secret).join('redacted'), line);
}
