import type { OpenAPIBackend } from 'openapi-backend';
import { readSpecOperations } from './specOperations.js';

/** What the contract says about an operation beyond its schemas, read from it once at start-up (by readSpecOperations). */
export interface OperationRules {
  operationId: string;
  method: string;
  path: string;
  /** `x-ratelimit-class`: the bucket the call is counted in. */
  rateLimitClass: string;
  /** `x-ratelimit-cost`: the units a call counts in its bucket (1 when not declared); above 1, an expensive call (run apart, capped per workspace). */
  rateLimitCost: number;
  /** `x-required-scopes`: every one of them must be granted to the caller. */
  requiredScopes: readonly string[];
  /** `x-required-roles`: the roles that may call (every kind of caller is checked); empty when every role may. */
  requiredRoles: readonly string[];
  /** No credential, no caller, no limits (`security: []`). */
  isPublic: boolean;
  /** `x-idempotent` (POST by default): the call may carry an Idempotency-Key, and a repeat replays the first answer. */
  idempotent: boolean;
  /** The request body's media types, empty when the operation takes none. */
  bodyMediaTypes: readonly string[];
}

/** Every operation's rules; a missing or malformed declaration stops the start-up with what to add. */
export function readOperationRules(backend: OpenAPIBackend): Map<string, OperationRules> {
  const rules = new Map<string, OperationRules>();
  for (const operation of readSpecOperations(backend.definition)) {
    const { operationId, rateLimitClass, rateLimitCost, requiredScopes, idempotent } = operation;
    const where = `${operation.method.toUpperCase()} ${operation.path}`;
    if (operationId === undefined || rateLimitClass === undefined || requiredScopes === undefined || idempotent === undefined || rateLimitCost === undefined) {
      throw new Error(
        `${where} needs an operationId, x-ratelimit-class and x-required-scopes (and x-idempotent, when given, must be true or false; x-ratelimit-cost a whole number, 1 or more); run npm run build:contract for the details`,
      );
    }
    if (operation.credential === 'optional') {
      throw new Error(`${where} (${operationId}) lists {} among its security requirements (a credential is optional), which the server does not serve: write security: [] for a public operation, or leave {} out`);
    }
    const requestBody = backend.getOperation(operationId)?.requestBody as { content?: Record<string, unknown> } | undefined;
    rules.set(operationId, {
      operationId,
      method: operation.method,
      path: operation.path,
      rateLimitClass,
      rateLimitCost,
      requiredScopes,
      requiredRoles: operation.requiredRoles,
      isPublic: operation.isPublic,
      idempotent,
      bodyMediaTypes: Object.keys(requestBody?.content ?? {}),
    });
  }
  return rules;
}
