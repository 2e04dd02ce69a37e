import { params as pathParamsParser } from 'bath-es5';
import { OpenAPIRouter, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface TemplateRoute {
  pattern: RegExp;
  /** Length of the template without its `{param}` parts: longer is more specific. */
  specificity: number;
  /** Position in matching order (most specific first, then document order). */
  rank: number;
  operationsByMethod: Map<string, Operation>;
}

/**
 * Templates grouped by segment count and first segment, so that a request tests only the
 * templates that could match it, whatever the size of the API. `n:*` holds the templates whose
 * first segment has a parameter; the `n:<literal>` lists include them, in matching order.
 */
type TemplateBuckets = Map<string, TemplateRoute[]>;

function bucketKeys(path: string): { literal: string; wildcard: string } {
  const segments = path.split('/');
  return { literal: `${segments.length}:${segments[1] ?? ''}`, wildcard: `${segments.length}:*` };
}

export interface RouteMatch {
  operation?: Operation;
  /** Methods the matched path offers (upper case), for the `Allow` header of a 405. */
  allowedMethods: string[];
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compileTemplate(path: string): RegExp {
  const pattern = path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+');
  return new RegExp(`^${pattern}$`);
}

/**
 * openapi-backend's router with its operation table built once.
 *
 * The stock router re-derives every operation with lodash and compiles one RegExp per
 * operation on every request, so routing cost grows with the size of the API. This one keeps
 * the same semantics (apiRoot, trailing slashes ignored, exact paths before templates, the most
 * specific template first, 404 when no path matches, 405 when the path matches but the method
 * does not) and answers from maps and pre-compiled patterns.
 */
export class PrecompiledRouter extends OpenAPIRouter {
  private operationTable?: Operation[];
  private operationsById?: Map<string, Operation>;
  private exactRoutes?: Map<string, Map<string, Operation>>;
  private templateBuckets?: TemplateBuckets;
  private readonly pathParamParsers = new Map<string, (path: string) => Record<string, string> | null>();
  private readonly styledQueryOperations = new WeakMap<Operation, boolean>();

  override getOperations(): Operation[] {
    this.operationTable ??= super.getOperations();
    return this.operationTable;
  }

  override getOperation(operationId: string): Operation | undefined {
    if (!this.operationsById) {
      this.operationsById = new Map();
      for (const operation of this.getOperations()) {
        if (operation.operationId) this.operationsById.set(operation.operationId, operation);
      }
    }
    return this.operationsById.get(operationId);
  }

  /** Finds the operation for a request, or says which methods its path offers. */
  route(method: string, rawPath: string): RouteMatch | undefined {
    const { exactRoutes, templateBuckets } = this.buildTables();
    let path = rawPath.trim();
    if (!path.startsWith('/')) path = `/${path}`;
    const queryStart = path.indexOf('?');
    if (queryStart >= 0) path = path.slice(0, queryStart);
    if (!this.underApiRoot(path)) return undefined;
    const normalizedPath = this.normalizePath(path);
    const normalizedMethod = method.trim().toLowerCase();

    const exact = exactRoutes.get(normalizedPath);
    const exactOperation = exact?.get(normalizedMethod);
    if (exact && exactOperation) return { operation: exactOperation, allowedMethods: allowedMethodsOf(exact) };

    const keys = bucketKeys(normalizedPath);
    const candidates = templateBuckets.get(keys.literal) ?? templateBuckets.get(keys.wildcard) ?? [];
    const matchingTemplates = candidates.filter((route) => route.pattern.test(normalizedPath));
    const operation = matchingTemplates.map((route) => route.operationsByMethod.get(normalizedMethod)).find(Boolean);
    if (!exact && matchingTemplates.length === 0) return undefined;
    // Every method that some route of this path answers, since any of them would be served.
    const allowed = new Set(exact?.keys());
    for (const route of matchingTemplates) for (const method of route.operationsByMethod.keys()) allowed.add(method);
    const allowedMethods = HTTP_METHODS.filter((method) => allowed.has(method)).map((method) => method.toUpperCase());
    return operation ? { operation, allowedMethods } : { allowedMethods };
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict?: boolean): Operation | undefined {
    const match = this.route(req.method, req.path);
    if (match?.operation) return match.operation;
    if (!strict) return undefined;
    if (match) throw new Error('405-methodNotAllowed: this method is not registered for the route');
    throw new Error('404-notFound: no route matches request');
  }

  /**
   * The stock parser compiles the operation's path template on every call, copies the headers
   * with lodash and parses the query with qs, and openapi-backend calls it three times a request
   * (before and after routing, and in validation). This one compiles each template once and reads
   * the query with URLSearchParams: the contracts' query parameters are flat names, so qs's
   * brackets and dots never name one of them (a repeated name is a list, as with qs). Requests with
   * cookies, and query parameters with a style of their own (`explode: false`, `content`), still go
   * through the stock parser, which handles them.
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    const headers = lowerCasedHeaders(req.headers);
    if ((operation && this.hasStyledQueryParameters(operation)) || headers.cookie !== undefined) {
      const parsed = super.parseRequest(req, operation);
      return operation ? { ...parsed, params: this.pathParams(operation, parsed.path) } : parsed;
    }
    // As normalizeRequest: the path without its query, with a leading slash; the method in lower case.
    let path = req.path?.trim() || '';
    if (!path.startsWith('/')) path = `/${path}`;
    const queryStart = path.indexOf('?');
    if (queryStart >= 0) path = path.slice(0, queryStart);
    return {
      ...req,
      path,
      method: req.method.trim().toLowerCase(),
      headers,
      cookies: {},
      query: flatQuery(req),
      requestBody: parsedBody(req.body),
      params: operation ? this.pathParams(operation, path) : {},
    };
  }

  private hasStyledQueryParameters(operation: Operation): boolean {
    let styled = this.styledQueryOperations.get(operation);
    if (styled === undefined) {
      styled = hasStyledQueryParameters(operation);
      this.styledQueryOperations.set(operation, styled);
    }
    return styled;
  }

  private pathParams(operation: Operation, path: string): Record<string, string> {
    let parsePathParams = this.pathParamParsers.get(operation.path);
    if (!parsePathParams) {
      parsePathParams = pathParamsParser(operation.path) as (path: string) => Record<string, string> | null;
      this.pathParamParsers.set(operation.path, parsePathParams);
    }
    return parsePathParams(this.normalizePath(path)) ?? {};
  }

  /** The stock router keeps this check private; the same rule: the root itself or a child of it. */
  private underApiRoot(path: string): boolean {
    if (this.apiRoot === '/') return path.startsWith('/');
    const root = this.apiRoot.replace(/\/$/, '');
    return path === root || path.startsWith(`${root}/`);
  }

  private buildTables(): { exactRoutes: Map<string, Map<string, Operation>>; templateBuckets: TemplateBuckets } {
    if (this.exactRoutes && this.templateBuckets) {
      return { exactRoutes: this.exactRoutes, templateBuckets: this.templateBuckets };
    }
    const exactRoutes = new Map<string, Map<string, Operation>>();
    const templatesByPath = new Map<string, TemplateRoute>();
    for (const operation of this.getOperations()) {
      if (operation.path.includes('{')) {
        let route = templatesByPath.get(operation.path);
        if (!route) {
          route = {
            pattern: compileTemplate(operation.path),
            specificity: operation.path.replace(/\{.*?\}/g, '').length,
            rank: 0,
            operationsByMethod: new Map(),
          };
          templatesByPath.set(operation.path, route);
        }
        route.operationsByMethod.set(operation.method, operation);
      } else {
        let byMethod = exactRoutes.get(operation.path);
        if (!byMethod) {
          byMethod = new Map();
          exactRoutes.set(operation.path, byMethod);
        }
        byMethod.set(operation.method, operation);
      }
    }
    // A stable sort keeps document order among templates of equal specificity, as lodash's orderBy does.
    const templateRoutes = [...templatesByPath.entries()].sort(([, a], [, b]) => b.specificity - a.specificity);
    const templateBuckets: TemplateBuckets = new Map();
    templateRoutes.forEach(([path, route], rank) => {
      route.rank = rank;
      const keys = bucketKeys(path);
      const key = path.split('/')[1]?.includes('{') ? keys.wildcard : keys.literal;
      templateBuckets.set(key, [...(templateBuckets.get(key) ?? []), route]);
    });
    for (const [key, routes] of templateBuckets) {
      if (key.endsWith(':*')) continue;
      const wildcards = templateBuckets.get(`${key.split(':')[0]}:*`) ?? [];
      templateBuckets.set(key, [...routes, ...wildcards].sort((a, b) => a.rank - b.rank));
    }
    this.exactRoutes = exactRoutes;
    this.templateBuckets = templateBuckets;
    return { exactRoutes, templateBuckets };
  }
}

function lowerCasedHeaders(headers: Request['headers']): Record<string, string | string[]> {
  const lowerCased: Record<string, string | string[]> = {};
  for (const header in headers) lowerCased[header.toLowerCase()] = headers[header]!;
  return lowerCased;
}

/** The query as openapi-backend's parser gives it for flat names: a value per name, a list for a name given more than once. */
function flatQuery(req: Request): Record<string, string | string[]> {
  if (req.query !== undefined && typeof req.query === 'object') {
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.query)) query[name] = Array.isArray(value) ? [...(value as string[])] : (value as string);
    return query;
  }
  return parsedQueryOf(queryValues(typeof req.query === 'string' ? req.query.replace('?', '') : (req.path.split('?')[1] ?? '')));
}

/** Each name's values in a query string, in order (only the names `keep` takes). */
export function queryValues(text: string, keep: (name: string) => boolean = () => true): Map<string, string[]> {
  const values = new Map<string, string[]>();
  if (text === '') return values;
  for (const [name, value] of new URLSearchParams(text)) {
    if (!keep(name)) continue;
    const list = values.get(name);
    if (list) list.push(value);
    else values.set(name, [value]);
  }
  return values;
}

/** Values by name as openapi-backend's parser gives them: the value of a name given once, the list of one given more often. */
export function parsedQueryOf(values: Map<string, string[]>): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, list] of values) query[name] = list.length === 1 ? list[0]! : [...list];
  return query;
}

/** As the stock parser: a body given as text is parsed as JSON when it is JSON, else left as it is. */
function parsedBody(body: unknown): unknown {
  if (!body || typeof body === 'object') return body;
  try {
    return JSON.parse(String(body));
  } catch {
    return body;
  }
}

function hasStyledQueryParameters(operation: Operation): boolean {
  return (operation.parameters ?? []).some(
    (parameter) => !('$ref' in parameter) && parameter.in === 'query' && (parameter.explode === false || parameter.content !== undefined),
  );
}

function allowedMethodsOf(operationsByMethod: Map<string, Operation>): string[] {
  return HTTP_METHODS.filter((method) => operationsByMethod.has(method)).map((method) => method.toUpperCase());
}
