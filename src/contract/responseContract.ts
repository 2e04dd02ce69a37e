import type { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { createAjv2020 } from './ajv.js';
import { compiledSchemasCache } from './compiledSchemas.js';
import { escapePointerToken, unescapePointerToken } from './jsonPointer.js';
import { validationIssues } from './validationIssues.js';

export interface ObservedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  /** The parsed body: JSON parsed, any other media type as its text, undefined when empty. */
  body: unknown;
}

type JsonObject = Record<string, unknown>;

const DOCUMENT_ID = 'contract';


/**
 * Checks a response against what the contract declares for its operation and status: the
 * status is declared, every required header is present and every declared header matches its
 * schema, the media type is declared and the body matches its schema. Works on the bundled
 * document (internal `$ref`s only), the same one clients download.
 */
export class ResponseContract {
  /** Made on the first check: adding the whole document to Ajv is a tenth of start-up, and most servers check nothing. */
  private documentAjv: Ajv | undefined;
  private readonly operationPointers = new Map<string, string>();
  private readonly validators = new Map<string, ValidateFunction>();

  /** The process's one checker of `document`'s contract, shared by every server serving it (compiledSchemas.ts). */
  static sharedFor(document: JsonObject): ResponseContract {
    const shared = compiledSchemasCache<ResponseContract>(document, 'response contract');
    let contract = shared.get('');
    if (!contract) {
      contract = new ResponseContract(document);
      shared.set('', contract);
    }
    return contract;
  }

  constructor(private readonly document: JsonObject) {
    const paths = (document.paths ?? {}) as Record<string, JsonObject>;
    for (const [path, pathItem] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(pathItem)) {
        const operationId = (operation as JsonObject | undefined)?.operationId;
        if (typeof operationId === 'string') {
          this.operationPointers.set(operationId, `/paths/${escapePointerToken(path)}/${method}`);
        }
      }
    }
  }

  /** Returns one line per violation; an empty list means the response honours the contract. */
  check(operationId: string, response: ObservedResponse): string[] {
    const operationPointer = this.operationPointers.get(operationId);
    if (!operationPointer) return [`operation ${operationId} is not in the contract`];
    const responses = (this.resolve(`${operationPointer}/responses`) ?? {}) as JsonObject;
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find(
      (key) => key in responses,
    );
    if (!statusKey) return [`${operationId}: status ${response.status} is not declared`];
    const responsePointer = this.followRefs(`${operationPointer}/responses/${escapePointerToken(statusKey)}`);
    const declared = this.resolve(responsePointer) as JsonObject;
    const where = `${operationId} ${response.status}`;
    return [
      ...this.checkHeaders(where, responsePointer, declared, response),
      ...this.checkBody(where, responsePointer, declared, response),
    ];
  }

  private checkHeaders(where: string, responsePointer: string, declared: JsonObject, response: ObservedResponse): string[] {
    const problems: string[] = [];
    const headers = (declared.headers ?? {}) as JsonObject;
    for (const name of Object.keys(headers)) {
      const headerPointer = this.followRefs(`${responsePointer}/headers/${escapePointerToken(name)}`);
      const header = this.resolve(headerPointer) as JsonObject;
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      if (!header.schema) continue;
      const validate = this.validatorAt(`${headerPointer}/schema`);
      const schemaType = (this.resolve(this.followRefs(`${headerPointer}/schema`)) as JsonObject).type;
      const typedValue = schemaType === 'integer' || schemaType === 'number' ? Number(value) : value;
      if (value === '') problems.push(`${where}: header ${name} is empty`);
      else if (!validate(typedValue)) {
        const reasons = validationIssues(validate.errors ?? [], 'body').map(({ path, message }) => (path ? `${path} ${message}` : message));
        problems.push(`${where}: header ${name}=${JSON.stringify(value)} ${reasons.join('; ')}`);
      }
    }
    return problems;
  }

  private checkBody(where: string, responsePointer: string, declared: JsonObject, response: ObservedResponse): string[] {
    const content = declared.content as JsonObject | undefined;
    const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!content) {
      return response.body === undefined ? [] : [`${where}: the contract declares no body, but one was sent`];
    }
    if (!(contentType in content)) {
      return [`${where}: content type "${contentType}" is not declared (declared: ${Object.keys(content).join(', ')})`];
    }
    const mediaPointer = `${responsePointer}/content/${escapePointerToken(contentType)}`;
    if (!(this.resolve(mediaPointer) as JsonObject).schema) return [];
    const validate = this.validatorAt(`${mediaPointer}/schema`);
    if (validate(response.body)) return [];
    return validationIssues(validate.errors ?? [], 'body').map(({ path, message }) => `${where}: body${path} ${message}`);
  }

  private validatorAt(pointer: string): ValidateFunction {
    const cached = this.validators.get(pointer);
    if (cached) return cached;
    const validate = this.ajv().compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    this.validators.set(pointer, validate);
    return validate;
  }

  private ajv(): Ajv {
    if (!this.documentAjv) {
      this.documentAjv = createAjv2020({ validateSchema: false, allErrors: true });
      this.documentAjv.addSchema(this.document, DOCUMENT_ID);
    }
    return this.documentAjv;
  }

  /** Follows `$ref`s of responses and headers (objects Ajv does not resolve) to their target pointer. */
  private followRefs(pointer: string): string {
    let current = pointer;
    for (let hops = 0; hops < 10; hops++) {
      const node = this.resolve(current) as JsonObject | undefined;
      const ref = node?.$ref;
      if (typeof ref !== 'string') return current;
      if (!ref.startsWith('#')) throw new Error(`external $ref ${ref} in a bundled document`);
      current = ref.slice(1);
    }
    throw new Error(`$ref chain too long at ${pointer}`);
  }

  private resolve(pointer: string): unknown {
    let node: unknown = this.document;
    for (const rawToken of pointer.split('/').slice(1)) {
      const token = unescapePointerToken(rawToken);
      if (node === null || typeof node !== 'object') return undefined;
      node = (node as JsonObject)[token];
    }
    return node;
  }
}
