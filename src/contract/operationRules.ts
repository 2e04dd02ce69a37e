import type { OpenAPIBackend } from 'openapi-backend';

/** What the contract says about an operation beyond its schemas, read from its extensions once at start-up. */
export interface OperationRules {
  operationId: string;
  method: string;
  path: string;
  rateLimitClass: string;
  requiredScopes: string[];
  /** Roles a session caller needs (`x-required-roles`); empty when any member may call. */
  requiredRoles: string[];
  /** True when the operation declares `security: []`. */
  isPublic: boolean;
}

export function readOperationRules(backend: OpenAPIBackend): Map<string, OperationRules> {
  const rules = new Map<string, OperationRules>();
  for (const operation of backend.getOperations()) {
    const operationId = operation.operationId;
    const extensions = operation as unknown as Record<string, unknown>;
    const rateLimitClass = extensions['x-ratelimit-class'];
    const requiredScopes = extensions['x-required-scopes'];
    if (!operationId || typeof rateLimitClass !== 'string' || !Array.isArray(requiredScopes)) {
      throw new Error(
        `${operation.method.toUpperCase()} ${operation.path} needs an operationId, x-ratelimit-class and x-required-scopes`,
      );
    }
    rules.set(operationId, {
      operationId,
      method: operation.method,
      path: operation.path,
      rateLimitClass,
      requiredScopes: requiredScopes as string[],
      requiredRoles: Array.isArray(extensions['x-required-roles']) ? (extensions['x-required-roles'] as string[]) : [],
      isPublic: Array.isArray(operation.security) && operation.security.length === 0,
    });
  }
  return rules;
}
