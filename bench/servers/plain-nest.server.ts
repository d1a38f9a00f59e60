import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NOTIFICATION_PATH } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';

/** 3. The adapter's own ceiling: a Nest route that acknowledges whatever it is sent. */
@Controller(NOTIFICATION_PATH)
class NotificationsController {
  @Post()
  @HttpCode(200)
  receive(@Body() _notification: unknown): { ResultCode: number } {
    return { ResultCode: 0 };
  }
}

@Module({ controllers: [NotificationsController] })
class AppModule {}

await serveNestApp(AppModule);
