/** A request body sent byte for byte, for testing how a receiver treats malformed notifications. */
export class RawNotification {
  constructor(
    readonly body: string | Uint8Array,
    readonly contentType: string = 'application/json',
  ) {}
}

/** A body the simulator sends exactly as given, e.g. `rawNotification('{"eventType":')` or `rawNotification('', 'text/plain')`. */
export function rawNotification(body: string | Uint8Array, contentType?: string): RawNotification {
  return new RawNotification(body, contentType);
}
