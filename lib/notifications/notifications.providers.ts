import type { Provider } from '@nestjs/common';

export const NOTIFICATIONS_PROVIDERS: Provider[] = [];
