import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';

/** The encodings the client asks for and decodes; a reply in any other is read as sent. */
export const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

/** A reply body as far as it was read: whole, or cut short because it was too large or its stream failed. */
export type ReplyBody =
  | { bytes: Buffer; cutShort: undefined }
  | { bytes: Buffer; cutShort: 'too-large' }
  | { bytes: Buffer; cutShort: 'failed'; error: unknown };

const noop = () => undefined;

/**
 * Reads and decodes a reply body, keeping at most `maxBytes` decoded bytes: past them it stops reading and tears
 * the stream (and so the connection) down, so neither a huge reply nor a compression bomb is ever held in memory.
 * Never rejects: a failure mid-way (the deadline's abort, a reset, undecodable data) returns what arrived.
 */
export async function readReplyBody(source: Readable, contentEncoding: unknown, maxBytes: number): Promise<ReplyBody> {
  const decoder = decoderFor(contentEncoding);
  const decoded: Readable = decoder ? pipeline(source, decoder, noop) : source;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      if (chunk.length > maxBytes - size) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        source.destroy();
        return { bytes: Buffer.concat(chunks, maxBytes), cutShort: 'too-large' };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    source.destroy();
    return { bytes: Buffer.concat(chunks, size), cutShort: 'failed', error };
  }
  return { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), cutShort: undefined };
}

function decoderFor(contentEncoding: unknown): Transform | undefined {
  switch (typeof contentEncoding === 'string' ? contentEncoding.trim().toLowerCase() : '') {
    case 'gzip':
    case 'x-gzip':
    case 'deflate':
      // Unzip tells gzip from zlib-wrapped deflate by the header.
      return createUnzip();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}
