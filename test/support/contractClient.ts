import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Document } from 'openapi-backend';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { PrecompiledRouter } from '../../src/contract/precompiledRouter.js';
import { ResponseContract } from '../../src/contract/responseContract.js';

export interface CheckedResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON bodies parsed; other bodies as text. */
  body: any;
  text: string;
  operationId?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One request over node:http (its global agent keeps connections alive, and lets one go before the
 * server's Keep-Alive timeout would), with what fetch adds by itself: an accept header for any type, and for a text
 * body without a type `text/plain;charset=UTF-8` and its length. fetch (undici) cost about three
 * times the CPU per request in the test's process, and the API suites make tens of thousands.
 */
function exchange(
  url: URL,
  method: string,
  init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const headers: Record<string, string> = { accept: '*/*', ...init.headers };
  if (init.body !== undefined) {
    const named = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    if (!named.has('content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
    if (!named.has('content-length')) headers['content-length'] = String(Buffer.byteLength(init.body));
  }
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method, headers, signal: init.signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const received: Record<string, string> = {};
        // As fetch's Headers iterate: each set-cookie apart (the last one stays), every other header's values joined,
        // so that a header the server sent twice shows as such (node:http's own `headers` keeps only the first of some).
        for (const [name, values] of Object.entries(response.headersDistinct)) {
          if (values) received[name] = name === 'set-cookie' ? values.at(-1)! : values.join(', ');
        }
        resolve({ status: response.statusCode!, headers: received, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    sent.on('error', reject);
    sent.end(init.body);
  });
}

/** The committed, generated contract of an API (the served copy differs only in `servers`). */
export function loadContractDocument(api: string): Record<string, unknown> {
  const file = fileURLToPath(new URL(`../../generated/${api}/openapi.json`, import.meta.url));
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** A validator of one component schema of an API's served document (`work-platform`, `portfolio`), e.g. its error shape. */
export function componentSchemaValidator(api: string, name: string) {
  const ajv = createAjv2020({ validateSchema: false });
  ajv.addSchema(loadContractDocument(api), api);
  return ajv.compile({ $ref: `${api}#/components/schemas/${name}` });
}

/** What a client checks answers with, compiled once per API and error schema for every client of the process. */
interface CompiledContract {
  document: Record<string, unknown>;
  router: PrecompiledRouter;
  contract: ResponseContract;
  validateError: (body: unknown) => boolean;
}

const compiledContracts = new Map<string, CompiledContract>();

function compiledContract(api: string, errorSchemaName: string): CompiledContract {
  const key = `${api} ${errorSchemaName}`;
  let compiled = compiledContracts.get(key);
  if (!compiled) {
    const document = loadContractDocument(api);
    const ajv = createAjv2020({ validateSchema: false });
    ajv.addSchema(document, 'client-contract');
    compiled = {
      document,
      router: new PrecompiledRouter({ definition: document as unknown as Document }),
      contract: new ResponseContract(document),
      validateError: ajv.compile({ $ref: `client-contract#/components/schemas/${errorSchemaName}` }),
    };
    compiledContracts.set(key, compiled);
  }
  return compiled;
}

/**
 * An HTTP client for tests that validates every response it receives against the contract:
 * the operation's declared status, headers and body, and for requests that match no operation
 * (404, 405) the API's error schema. A mismatch throws, so it fails the test that made the call.
 */
export class ContractClient {
  /** The committed contract, shared by every client of the API in the process: read it, never change it. */
  readonly document: Record<string, unknown>;
  private readonly router: PrecompiledRouter;
  private readonly contract: ResponseContract;
  private readonly validateError: (body: unknown) => boolean;

  constructor(
    readonly baseUrl: string,
    api = 'portfolio',
    errorSchemaName = 'ErrorEnvelope',
  ) {
    ({ document: this.document, router: this.router, contract: this.contract, validateError: this.validateError } = compiledContract(api, errorSchemaName));
  }

  get(path: string, headers: Record<string, string> = {}): Promise<CheckedResponse> {
    return this.request('GET', path, { headers });
  }

  /** `signal`: to give up on an answer that does not come (a test of a hang). */
  async request(method: string, path: string, init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}): Promise<CheckedResponse> {
    const response = await exchange(new URL(path, this.baseUrl), method, init);
    const { text, headers } = response;
    const contentType = headers['content-type'] ?? '';
    const body = text === '' ? undefined : contentType.includes('json') ? JSON.parse(text) : text;
    const problems: string[] = [];
    if (!REQUEST_ID.test(headers['x-request-id'] ?? '')) problems.push('x-request-id header missing or malformed');
    const operationId = this.router.route(method, new URL(path, this.baseUrl).pathname)?.operation?.operationId;
    if (operationId) {
      problems.push(...this.contract.check(operationId, { status: response.status, headers, body: method === 'HEAD' ? undefined : body }));
    } else if (response.status >= 400 && method !== 'HEAD' && !this.validateError(body)) {
      problems.push(`${method} ${path} ${response.status}: body is not an error of the contract: ${text.slice(0, 200)}`);
    }
    if (problems.length > 0) {
      throw new Error(`Response of ${method} ${path} violates the contract:\n  ${problems.join('\n  ')}`);
    }
    return { status: response.status, headers, body, text, operationId };
  }
}
