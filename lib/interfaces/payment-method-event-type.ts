/** The notification event types the payouts service documents. Others may arrive; catch-all handlers receive them. */
export const PaymentMethodEventType = {
  PAYMENT_METHOD_ADDED: 'PAYMENT_METHOD_ADDED',
  PAYMENT_METHOD_REMOVED: 'PAYMENT_METHOD_REMOVED',
} as const;

export type PaymentMethodEventType = (typeof PaymentMethodEventType)[keyof typeof PaymentMethodEventType];
