import { PipelineFailure } from './pipelineFailure.js';

/** What an operation handler returns; the HTTP adapter turns it into a response. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /**
   * An object is sent as JSON; a string or a Buffer (bytes encoded once and reused) is sent as it
   * is, with the `content-type` header the reply sets.
   */
  body?: unknown;
}

/** A request as the HTTP adapter hands it to an API, free of any framework. */
export interface IncomingCall {
  method: string;
  /** The path without the query string. */
  path: string;
  /** The raw query string without the leading `?`. */
  rawQuery: string;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /**
   * Reads the request body (undefined when empty), at most once. An API calls it only after its
   * own checks (CORS, routing), so a refused request never costs an upload; a body over the
   * limit rejects with `PayloadTooLargeError`; a body the client stopped sending (it closed the
   * connection) rejects with `ClientClosedError`.
   */
  readBody(): Promise<Buffer | undefined>;
  requestId: string;
  /**
   * The caller a request that carries this call already proved (each tool call of an MCP request):
   * its credential is not looked up again; the operation's schemes, scopes, roles and limits still apply.
   */
  provenCaller?: unknown;
}

export interface HandledCall {
  reply: Reply;
  /** The operation the call was routed to, when it matched one. */
  operationId?: string;
}

/** What an API does before routing (CORS on /v1): headers for every answer, or the whole answer (a preflight, a refused origin). */
export interface Screening {
  headers: Record<string, string>;
  reply?: Reply;
}

/**
 * One API (a contract and its handlers) behind the HTTP adapter. `screen` and `identify` are the
 * API's first steps on their own, for a surface under its prefix that answers in a protocol of its
 * own (MCP): the same CORS, the same caller and the same refusals as the API's operations.
 */
export interface ContractApi<Caller = unknown> {
  readonly name: string;
  /** Path prefix the API owns, e.g. `/api/v1`. */
  readonly pathPrefix: string;
  handle(call: IncomingCall): Promise<HandledCall>;
  screen(call: IncomingCall): Screening;
  /** The caller the call's credential proves, looked up once; or the API's answer when it proves none or cannot be looked up now (401, 503). */
  identify(call: IncomingCall): Promise<{ caller: Caller } | { reply: Reply }>;
}

/** Thrown while reading a body larger than the limit: the pipeline's `payload-too-large`. */
export class PayloadTooLargeError extends PipelineFailure {
  constructor(readonly limitBytes: number) {
    super({ kind: 'payload-too-large', limitBytes });
  }
}

/**
 * Thrown while reading a body when the client went away before it ended (nginx's 499). Not the
 * server's fault and nobody to answer: the pipeline passes it on untouched, the adapter logs it.
 */
export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
  constructor() {
    super('the client closed the connection before the request body ended');
  }
}
