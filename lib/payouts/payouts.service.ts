import { Inject, Injectable } from '@nestjs/common';
import { HttpService } from '@nestjs/axios';
import { PAYOUTS_CONFIG } from '../payouts.constants.js';
import type { PayoutsConfig } from '../payouts-config.js';

@Injectable()
export class PayoutsService {
  constructor(
    private readonly http: HttpService,
    @Inject(PAYOUTS_CONFIG) private readonly config: PayoutsConfig,
  ) {}
}
