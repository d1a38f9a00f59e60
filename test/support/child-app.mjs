// The start-up the test apps run as their own processes share, in plain JavaScript like them. A spec reads such a
// process's stdout line by line, so everything here prints one line per event.
import { NestFactory } from '@nestjs/core';

const firstLine = (message) => String(message).split('\n')[0];

/** A Nest logger that prints only errors, as `error <first line>`. */
export const errorLinesLogger = {
  log() {},
  warn() {},
  debug() {},
  verbose() {},
  error: (message) => console.log(`error ${firstLine(message)}`),
  fatal: (message) => console.log(`error ${firstLine(message)}`),
};

/**
 * Creates the app's context with `errorLinesLogger` and shutdown hooks, then prints `ready`. A bootstrap that fails
 * prints `bootstrap-failed <first line>` instead, sets the exit code to 1 and resolves with `undefined`.
 */
export async function startChildApp(AppModule) {
  let app;
  try {
    app = await NestFactory.createApplicationContext(AppModule, { logger: errorLinesLogger, abortOnError: false });
  } catch (error) {
    console.log(`bootstrap-failed ${firstLine(error.message)}`);
    process.exitCode = 1;
    return undefined;
  }
  app.enableShutdownHooks();
  console.log('ready');
  return app;
}
