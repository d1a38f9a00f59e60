import { PaymentMethodEventType } from '../interfaces/payment-method-event-type.js';

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.values(PaymentMethodEventType));

/**
 * The event type as an attribute: a documented type as it is, any other as `other`, so that a sender inventing types
 * cannot multiply the metric series.
 */
export function eventTypeBucket(eventType: string): string {
  return KNOWN_EVENT_TYPES.has(eventType) ? eventType : 'other';
}
