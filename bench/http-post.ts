import { request } from 'node:http';

export interface PostResult {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

/** One JSON POST on a fresh connection to 127.0.0.1, bounded by `timeoutMs`. */
export function postJson(port: number, path: string, body: string, timeoutMs = 10_000): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
