/** What an operation handler returns; the HTTP adapter turns it into a response. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is, with the `content-type` header the reply sets. */
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
  body?: Buffer;
  requestId: string;
}

export interface HandledCall {
  reply: Reply;
  /** The operation the call was routed to, when it matched one. */
  operationId?: string;
}

/** One API (a contract and its handlers) behind the HTTP adapter. */
export interface ContractApi {
  readonly name: string;
  /** Path prefix the API owns, e.g. `/api/v1`. */
  readonly pathPrefix: string;
  /** Whether any operation takes a request body; when not, the adapter never reads one. */
  readonly readsRequestBodies: boolean;
  handle(call: IncomingCall): Promise<HandledCall>;
}
