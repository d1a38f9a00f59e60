import 'reflect-metadata';
import * as classTransformer from 'class-transformer';
import * as classValidator from 'class-validator';
import { describe, expect, it } from 'vitest';
import * as transformerFiles from '../../lib/common/class-transformer-files.js';
import * as validatorFiles from '../../lib/common/class-validator-files.js';
import { PayoutAmountDto } from '../../lib/payouts/dto/payout-amount.dto.js';
import { PayoutRequestDto } from '../../lib/payouts/dto/payout-request.dto.js';
import { WalletPayoutMethodDto } from '../../lib/payouts/dto/wallet-payout-method.dto.js';

/** The functions each module exports, by name, without the ones it defines itself. */
function parts(module: object, own: string[]): [string, unknown][] {
  return Object.entries(module).filter(([name, value]) => typeof value === 'function' && !own.includes(name));
}

describe('the parts of class-validator and class-transformer loaded from their own files', () => {
  it('are the very functions class-validator exports from its root', () => {
    const picked = parts(validatorFiles, ['validate']);
    expect(picked.map(([name]) => name)).toEqual(
      expect.arrayContaining(['IsDefined', 'IsEmail', 'isEmail', 'registerDecorator', 'Validator', 'getFromContainer']),
    );
    for (const [name, value] of picked) {
      expect({ name, same: value === (classValidator as Record<string, unknown>)[name] }).toEqual({ name, same: true });
    }
  });

  it('are the very functions class-transformer exports from its root', () => {
    const picked = parts(transformerFiles, ['plainToInstance']);
    expect(picked.map(([name]) => name).sort()).toEqual(['ClassTransformer', 'Type']);
    for (const [name, value] of picked) {
      expect({ name, same: value === (classTransformer as Record<string, unknown>)[name] }).toEqual({
        name,
        same: true,
      });
    }
  });

  it('validate and transform as the root functions do, nested classes and all', async () => {
    const request = {
      reference: 'ref-1',
      amount: { value: '10.005', currency: 'USD' },
      payout_method: { type: 'wallet', details: { phone_number: '+1' } },
    };
    const ours = validatorFiles.validate(transformerFiles.plainToInstance(PayoutRequestDto, request));
    const theirs = classValidator.validate(classTransformer.plainToInstance(PayoutRequestDto, request));
    const errors = await ours;
    expect(errors.map((error) => error.property)).toEqual(expect.arrayContaining(['amount', 'payout_method']));
    for (const nested of ['amount', 'payout_method']) {
      expect(errors.find((error) => error.property === nested)?.children?.length).toBeGreaterThan(0);
    }
    expect(JSON.stringify(errors)).toBe(JSON.stringify(await theirs));
    const transformed = transformerFiles.plainToInstance(PayoutRequestDto, request);
    expect(transformed.amount).toBeInstanceOf(PayoutAmountDto);
    expect(transformed.payout_method).toBeInstanceOf(WalletPayoutMethodDto);
    expect(transformed).toEqual(classTransformer.plainToInstance(PayoutRequestDto, request));
  });
});
