import type { OpenAPIBackend } from 'openapi-backend';

/** What the contract says about an operation beyond its schemas, read from it once at start-up. */
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
  /** `security: []`: no credential, no limits. */
  isPublic: boolean;
  /** `x-idempotent` (POST by default): the call may carry an Idempotency-Key, and a repeat replays the first answer. */
  idempotent: boolean;
  /** The request body's media types, empty when the operation takes none. */
  bodyMediaTypes: readonly string[];
}

/** Reads every operation's rules; a missing extension stops the start-up with what to add. */
export function readOperationRules(backend: OpenAPIBackend): Map<string, OperationRules> {
  const rules = new Map<string, OperationRules>();
  for (const operation of backend.getOperations()) {
    const operationId = operation.operationId;
    const extensions = operation as unknown as Record<string, unknown>;
    const rateLimitClass = extensions['x-ratelimit-class'];
    const requiredScopes = extensions['x-required-scopes'];
    const idempotent = extensions['x-idempotent'] ?? operation.method === 'post';
    const rateLimitCost = extensions['x-ratelimit-cost'] ?? 1;
    if (!operationId || typeof rateLimitClass !== 'string' || !Array.isArray(requiredScopes) || typeof idempotent !== 'boolean' || !Number.isInteger(rateLimitCost) || (rateLimitCost as number) < 1) {
      throw new Error(
        `${operation.method.toUpperCase()} ${operation.path} needs an operationId, x-ratelimit-class and x-required-scopes (and x-idempotent, when given, must be true or false; x-ratelimit-cost a whole number, 1 or more); run npm run build:contract for the details`,
      );
    }
    const requestBody = operation.requestBody as { content?: Record<string, unknown> } | undefined;
    rules.set(operationId, {
      operationId,
      method: operation.method,
      path: operation.path,
      rateLimitClass,
      rateLimitCost: rateLimitCost as number,
      requiredScopes: requiredScopes as string[],
      requiredRoles: Array.isArray(extensions['x-required-roles']) ? (extensions['x-required-roles'] as string[]) : [],
      isPublic: Array.isArray(operation.security) && operation.security.length === 0,
      idempotent,
      bodyMediaTypes: Object.keys(requestBody?.content ?? {}),
    });
  }
  return rules;
}
