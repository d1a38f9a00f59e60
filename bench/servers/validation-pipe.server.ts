import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Post, ValidationPipe } from '@nestjs/common';
import { NOTIFICATION_PATH } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';
import { NotificationDto } from './notification-dtos.js';

/** 2. What a user would write by hand: the DTOs of `notification-dtos.ts`, checked per request by ValidationPipe. */
@Controller(NOTIFICATION_PATH)
class NotificationsController {
  @Post()
  @HttpCode(200)
  receive(@Body(new ValidationPipe({ transform: true, whitelist: true })) _notification: NotificationDto): {
    ResultCode: number;
  } {
    return { ResultCode: 0 };
  }
}

@Module({ controllers: [NotificationsController] })
class AppModule {}

await serveNestApp(AppModule);
