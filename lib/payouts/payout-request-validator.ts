import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import { type PayoutFieldError, PayoutValidationError } from '../errors/payout-validation.error.js';
import { PayoutRequestDto } from './dto/payout-request.dto.js';

/**
 * Rejects with `PayoutValidationError` listing every invalid field of the request.
 * Validates a copy: the caller's object is what gets sent.
 */
export async function validatePayoutRequest(request: unknown): Promise<void> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new PayoutValidationError([{ path: '', messages: ['the payout request must be an object'] }]);
  }
  const errors = await validate(plainToInstance(PayoutRequestDto, request), {
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    throw new PayoutValidationError(errors.flatMap((error) => fieldErrors(error, '')));
  }
}

function fieldErrors(error: ValidationError, parentPath: string): PayoutFieldError[] {
  const path = parentPath ? `${parentPath}.${error.property}` : error.property;
  const own = error.constraints ? [{ path, messages: Object.values(error.constraints) }] : [];
  return [...own, ...(error.children ?? []).flatMap((child) => fieldErrors(child, path))];
}
