import { readFileSync } from 'node:fs';
import { OpenAPIRouter, type Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { ContractBackend } from '../../src/contract/contractBackend.js';
import { PrecompiledRouter } from '../../src/contract/precompiledRouter.js';

const readContract = (api: string) => JSON.parse(readFileSync(new URL(`../../generated/${api}/openapi.json`, import.meta.url), 'utf8')) as Document;
const document = readContract('portfolio');
const workPlatformDocument = readContract('work-platform');

/** The shapes the portfolio API lacks: an exact path beside a template, nested templates, several methods. */
const syntheticDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/pets': { get: { operationId: 'listPets' }, post: { operationId: 'createPet' } },
    '/pets/mine': { get: { operationId: 'myPets' } },
    '/pets/{id}': { get: { operationId: 'getPet' }, delete: { operationId: 'deletePet' } },
    '/pets/{id}/toys/{toyId}': { get: { operationId: 'getToy' } },
    '/pets/{id}/toys/latest': { get: { operationId: 'latestToy' } },
    '/files/{name}.json': { get: { operationId: 'getFile' } },
    '/{owner}/toys': { get: { operationId: 'ownerToys' }, put: { operationId: 'replaceOwnerToys' } },
    '/{owner}/toys/{toyId}': { patch: { operationId: 'updateOwnerToy' } },
    '/pets/{id}/{part}': { get: { operationId: 'getPetPart' } },
  },
} as unknown as Document;

function matchOutcome(router: OpenAPIRouter, method: string, path: string): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, true)?.operationId ?? 'none';
  } catch (error) {
    return (error as Error).message.slice(0, 3);
  }
}

function concretePath(template: string): string {
  return template.replace(/\{[^}]+\}/g, 'x1');
}

describe.each([
  ['portfolio contract', document],
  ['work-platform contract', workPlatformDocument],
  ['synthetic document', syntheticDocument],
])('PrecompiledRouter on the %s', (_name, definition) => {
  const stock = new OpenAPIRouter({ definition });
  const precompiled = new PrecompiledRouter({ definition });
  const operations = stock.getOperations();
  const paths = [...new Set(operations.map((operation) => concretePath(operation.path)))];
  const probes = [
    ...paths,
    ...paths.map((path) => `${path}/`),
    ...paths.map((path) => `${path}/extra`),
    '/',
    '/nope',
    '/pets/mine/',
    '/files/report.json',
    '/files/reportxjson',
    '/pets/toys',
    '/pets/toys/',
    '/x/toys/7',
    '/pets/7/toys/9',
    '//toys',
    '/pets//toys',
  ];
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

  it('lists the same operations as the stock router', () => {
    expect(precompiled.getOperations().map((operation) => operation.operationId)).toEqual(
      operations.map((operation) => operation.operationId),
    );
    for (const operation of operations) {
      expect(precompiled.getOperation(operation.operationId!)?.path).toBe(operation.path);
    }
  });

  it.each(methods)('matches %s requests exactly as the stock router (operation, 404 or 405)', (method) => {
    for (const path of probes) {
      expect(`${method} ${path} -> ${matchOutcome(precompiled, method, path)}`).toBe(
        `${method} ${path} -> ${matchOutcome(stock, method, path)}`,
      );
    }
  });
});

describe('PrecompiledRouter.route', () => {
  const router = new PrecompiledRouter({ definition: syntheticDocument });

  it('names the methods a path offers, for the Allow header', () => {
    expect(router.route('PUT', '/pets')).toEqual({ allowedMethods: ['GET', 'POST'] });
    expect(router.route('POST', '/pets/7')).toEqual({ allowedMethods: ['GET', 'DELETE'] });
    expect(router.route('GET', '/unknown')).toBeUndefined();
    // Both the exact path and the template serve /pets/mine, so both of their methods are allowed.
    expect(router.route('POST', '/pets/mine')).toEqual({ allowedMethods: ['GET', 'DELETE'] });
  });

  it('prefers an exact path and the more specific template', () => {
    expect(router.route('GET', '/pets/mine')?.operation?.operationId).toBe('myPets');
    expect(router.route('DELETE', '/pets/mine')?.operation?.operationId).toBe('deletePet');
    expect(router.route('GET', '/pets/1/toys/latest')?.operation?.operationId).toBe('latestToy');
    expect(router.route('GET', '/pets/1/toys/9')?.operation?.operationId).toBe('getToy');
  });
});

/** Query parameters with a style of their own, which the precompiled parser hands to the stock one. */
const styledDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'tags', in: 'query', explode: false, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
        ],
      },
    },
  },
} as unknown as Document;

describe.each([
  ['portfolio contract', document],
  ['work-platform contract', workPlatformDocument],
  ['styled query parameters', styledDocument],
])('PrecompiledRouter.parseRequest on the %s', (_name, definition) => {
  it('parses every operation\'s requests as the stock parser (flat query names without cookies)', async () => {
    const backend = await new ContractBackend(definition).init();
    const stock = new OpenAPIRouter({ definition: backend.definition, apiRoot: backend.apiRoot, ignoreTrailingSlashes: true });
    const pathValues = ['x1', 'caf%C3%A9', 'a%2Fb', 'tsk_Q7mXc2VbN9pLr4TzK8sD'];
    const queries = ['', 'limit=5', 'limit=5&limit=6&unknown=1', 'tags=a,b&filter=%7B%22a%22%3A1%7D', 'a[b]=c&sort=title&order=asc', '?cursor=abc%3D%3D', 'q=a+b%20c&empty=&bare'];
    const plainHeaders = { Authorization: 'Bearer x', 'X-Mixed-Case': 'v', 'content-type': 'application/json' };
    // Without cookies, the fast parser reads the query by URLSearchParams: a bracketed name stays a
    // name of its own (qs would nest it), which no contract declares; every declared name parses alike.
    const declaredOnly = (parsed: ReturnType<OpenAPIRouter['parseRequest']>, names: Set<string>) => ({
      ...parsed,
      query: Object.fromEntries(Object.entries(parsed.query ?? {}).filter(([name]) => names.has(name))),
    });
    let compared = 0;
    for (const operation of backend.router.getOperations()) {
      const declared = new Set((operation.parameters ?? []).flatMap((parameter) => ('in' in parameter && parameter.in === 'query' ? [parameter.name] : [])));
      for (const value of pathValues) {
        for (const query of queries) {
          for (const trailing of ['', '/']) {
            const path = `${operation.path.replace(/\{[^}]+\}/g, value)}${trailing}`;
            for (const body of ['{"a":1}', 'not json', undefined]) {
              const withCookies = { method: operation.method.toUpperCase(), path, query, headers: { ...plainHeaders, cookie: 'a=1; b=2' }, body };
              expect(backend.router.parseRequest(withCookies, operation)).toEqual(stock.parseRequest(withCookies, operation));
              expect(backend.router.parseRequest(withCookies)).toEqual(stock.parseRequest(withCookies));
              const plain = { method: operation.method.toUpperCase(), path, query, headers: plainHeaders, body };
              const flatNames = query.includes('[') ? declared : new Set(Object.keys(stock.parseRequest(plain, operation).query ?? {}));
              expect(declaredOnly(backend.router.parseRequest(plain, operation), flatNames)).toEqual(declaredOnly(stock.parseRequest(plain, operation), flatNames));
              expect(declaredOnly(backend.router.parseRequest(plain), flatNames)).toEqual(declaredOnly(stock.parseRequest(plain), flatNames));
            }
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBe(backend.router.getOperations().length * pathValues.length * queries.length * 2);
  });
});
