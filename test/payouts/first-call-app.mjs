// A merchant app that boots with PayoutsModule and then sends its first payouts, two at once, run as its own process
// by http-client-loading.e2e.spec.ts. Plain JavaScript on the built package, loaded by name as an application does.
//   node first-call-app.mjs --base-url=http://127.0.0.1:<port> --request=<CreatePayoutRequest as JSON>
// Prints one line per event, in order: `load <package>` when the process first resolves a module of @nestjs/axios
// or axios, `booted` once the app is listening, `sent <status> <reply body>` for each payout, then `done`.
import { register } from 'node:module';
import { parseArgs } from 'node:util';
import { MessageChannel } from 'node:worker_threads';

const { values: options } = parseArgs({ options: { 'base-url': { type: 'string' }, request: { type: 'string' } } });

// The module resolution hooks run on a thread of their own and post every URL they resolve, in order. A marker
// module resolved after each event puts that event in the same sequence.
const { port1, port2 } = new MessageChannel();
const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, {
  data: { port: port2 },
  transferList: [port2],
});
const printed = new Set();
let markerSeen;
port1.on('message', (url) => {
  const marker = /^data:text\/javascript,\/\/marker (.+)$/.exec(url);
  if (marker) return markerSeen?.(decodeURIComponent(marker[1]));
  const name = /\/node_modules\/(@nestjs\/axios|axios)\//.exec(url)?.[1];
  if (name && !printed.has(name)) {
    printed.add(name);
    console.log(`load ${name}`);
  }
});
async function mark(event) {
  const seen = new Promise((resolve) => (markerSeen = (name) => name === event && resolve()));
  await import(`data:text/javascript,//marker ${encodeURIComponent(event)}`);
  await seen;
  console.log(event);
}

await import('reflect-metadata');
const { Module } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const { getPayoutsServiceToken, PayoutsModule } = await import('nestjs-payouts');

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: options['base-url'],
          apiKey: 'first-call-api-key',
          accessToken: 'first-call-access-token',
          notifications: false,
        }),
      ],
    }),
  ],
  AppModule,
);

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, '127.0.0.1');
await mark('booted');
const payouts = app.get(getPayoutsServiceToken());
const request = JSON.parse(options.request);
const results = await Promise.all(
  ['first', 'second'].map((suffix) =>
    payouts.createPayout({ ...request, request_id: `${request.request_id}-${suffix}` }),
  ),
);
for (const result of results) console.log(`sent ${result.status} ${JSON.stringify(result.body)}`);
await mark('done');
await app.close();
port1.close();
