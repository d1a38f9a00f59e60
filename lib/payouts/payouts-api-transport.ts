import { type ClientRequest, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import type { HttpService } from '@nestjs/axios';
import { replyHeaders } from './payout-reply.js';
import { ACCEPTED_ENCODINGS, type ReplyBody, readReplyBody } from './reply-body-reader.js';
import type { PayoutsTransportConfig } from './transport-config.js';

/** One HTTP exchange with the payouts API, exactly as sent. */
export interface ApiExchange {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  /** Aborts the exchange at any stage, reply body included. */
  readonly signal: AbortSignal;
  readonly maxResponseBytes: number;
}

/** A reply whose head arrived; its body may have been cut short. */
export interface ApiReply {
  readonly status: number;
  /** Names in lowercase; repeated headers joined with `", "`. */
  readonly headers: Record<string, string>;
  readonly body: ReplyBody;
  /**
   * The `Proxy-Authorization` header the request carried to a forward proxy (an `http://` API reached through one
   * with credentials, from the `proxy` option or `HTTP_PROXY`): a credential the reply may echo, like the others.
   */
  readonly proxyAuthorization: string | undefined;
}

// Built once rather than per call: the body is sent as serialised, and any status is a reply to look at.
const acceptAnyStatus = (): boolean => true;
const passTextThrough = [(data: string): string => data];

/**
 * Sends one request with axios and reads the reply body itself, as a stream: only then can the body be bounded
 * in time (the `signal`) and in decoded size, which axios's buffered reading does neither of.
 */
export class PayoutsApiTransport {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  /** The agents this transport made, and so closes; an agent from the options belongs to the app. */
  private readonly ownAgents: HttpAgent[] = [];

  // Typed through HttpService, not axios: @nestjs/axios 4 (Nest 11) sees axios's CommonJS typings, and the two
  // declarations of AxiosInstance do not match.
  #axios: HttpService['axiosRef'] | undefined;
  #loading: Promise<HttpService['axiosRef']> | undefined;

  constructor(
    /** Gives the `HttpService` the requests go through; called once, at the first call. */
    private readonly loadHttp: () => Promise<HttpService>,
    private readonly options: PayoutsTransportConfig,
  ) {
    // Reused connections keep bursts of payouts from opening a socket each.
    this.httpAgent = options.httpAgent ?? this.own(new HttpAgent({ keepAlive: true }));
    this.httpsAgent = options.httpsAgent ?? this.own(new HttpsAgent({ keepAlive: true }));
  }

  /**
   * Loads the HTTP client at the first call and resolves when it is there. A call waits for it before its first
   * attempt starts, so loading never eats into an attempt's deadline.
   */
  ready(): Promise<HttpService['axiosRef']> {
    this.#loading ??= this.loadHttp().then(({ axiosRef }) => (this.#axios = axiosRef));
    return this.#loading;
  }

  /** Resolves once the reply's body has been read or given up on; rejects when no reply head arrived. */
  async exchange(exchange: ApiExchange): Promise<ApiReply> {
    const axios = this.#axios ?? (await this.ready());
    const response = await axios.request<Readable>({
      method: exchange.method,
      url: exchange.url,
      headers: { ...exchange.headers, 'accept-encoding': ACCEPTED_ENCODINGS },
      data: exchange.body,
      signal: exchange.signal,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      proxy: this.options.proxy,
      // Following a redirect would hand the credentials to another address.
      maxRedirects: 0,
      validateStatus: acceptAnyStatus,
      transformRequest: passTextThrough,
      responseType: 'stream',
      decompress: false,
    });
    const headers = replyHeaders(response.headers as Record<string, unknown>);
    return {
      status: response.status,
      headers,
      body: await readReplyBody(response.data, headers['content-encoding'], exchange.maxResponseBytes),
      proxyAuthorization: sentHeader(response.request, 'proxy-authorization'),
    };
  }

  /** Closes the kept-alive connections of the agents it made. */
  destroy(): void {
    for (const agent of this.ownAgents) agent.destroy();
  }

  private own<T extends HttpAgent>(agent: T): T {
    this.ownAgents.push(agent);
    return agent;
  }
}

/** A header as the request that got the reply sent it (axios adds a proxy's credentials itself, on the way out). */
function sentHeader(request: unknown, name: string): string | undefined {
  const value = (request as Partial<Pick<ClientRequest, 'getHeader'>> | undefined)?.getHeader?.(name);
  return typeof value === 'string' ? value : undefined;
}
