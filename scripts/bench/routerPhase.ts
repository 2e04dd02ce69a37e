// The routing part of the bench, without HTTP: microseconds per `handleRequest()` of one
// ContractBackend (validation on, a handler that answers at once) as the API grows, once with
// the precompiled router and once with openapi-backend's stock router put back in its place. The request goes to the last
// operation of the document, the stock router's worst case.
import { OpenAPIRouter, type Document } from 'openapi-backend';
import { ContractBackend } from '../../src/contract/contractBackend.js';

export interface RouterFigures {
  operations: number;
  stockMicroseconds: number;
  precompiledMicroseconds: number;
}

/** `resources` path pairs like a CRUD API: a collection (GET, POST) and an item (GET, PATCH, DELETE). */
function syntheticDocument(resources: number): Document {
  const paths: Record<string, unknown> = {};
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9_]{1,40}$' } };
  const limitParameter = { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } };
  const ok = { responses: { '200': { description: 'ok' } } };
  for (let index = 0; index < resources; index += 1) {
    paths[`/resource${index}`] = {
      get: { operationId: `list${index}`, parameters: [limitParameter], ...ok },
      post: { operationId: `create${index}`, ...ok },
    };
    paths[`/resource${index}/{id}`] = {
      get: { operationId: `get${index}`, parameters: [idParameter], ...ok },
      patch: { operationId: `update${index}`, parameters: [idParameter], ...ok },
      delete: { operationId: `delete${index}`, parameters: [idParameter], ...ok },
    };
  }
  return { openapi: '3.1.0', info: { title: 'router bench', version: '1' }, paths } as unknown as Document;
}

/** Calls for about `budgetMs` after a short warm-up; the stock router at 1,000 operations takes milliseconds a call. */
async function microsecondsPerCall(backend: ContractBackend, path: string, budgetMs: number): Promise<number> {
  const request = { method: 'GET', path, query: 'limit=5', headers: { authorization: 'Bearer x' } };
  const callFor = async (milliseconds: number) => {
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(Math.round(milliseconds * 1e6));
    let calls = 0;
    while (calls < 20 || process.hrtime.bigint() < deadline) {
      await backend.handleRequest(request);
      calls += 1;
    }
    return Number(process.hrtime.bigint() - started) / 1000 / calls;
  };
  await callFor(budgetMs / 5);
  return callFor(budgetMs);
}

async function backendWithAnswers(document: Document): Promise<ContractBackend> {
  const backend = await new ContractBackend(document).init();
  backend.register({
    notFound: () => ({ status: 404 }),
    methodNotAllowed: () => ({ status: 405 }),
    validationFail: () => ({ status: 400 }),
  });
  for (const operation of backend.router.getOperations()) backend.register(operation.operationId!, () => ({ status: 200 }));
  return backend;
}

export async function measureRouting(resourceCounts: readonly number[], budgetMs: number): Promise<RouterFigures[]> {
  const figures: RouterFigures[] = [];
  for (const resources of resourceCounts) {
    const backend = await backendWithAnswers(syntheticDocument(resources));
    const lastItemPath = `/resource${resources - 1}/abc_123`;
    const answer = (await backend.handleRequest({ method: 'GET', path: lastItemPath, headers: {} })) as { status: number };
    if (answer.status !== 200) throw new Error(`router bench: GET ${lastItemPath} answered ${answer.status}`);
    const precompiledMicroseconds = round(await microsecondsPerCall(backend, lastItemPath, budgetMs));
    const precompiled = backend.router;
    const stock = new OpenAPIRouter({ definition: backend.definition, apiRoot: backend.apiRoot, ignoreTrailingSlashes: true });
    backend.router = stock as ContractBackend['router'];
    backend.validator.router = stock;
    const stockMicroseconds = round(await microsecondsPerCall(backend, lastItemPath, budgetMs));
    backend.router = precompiled;
    backend.validator.router = precompiled;
    figures.push({ operations: resources * 5, stockMicroseconds, precompiledMicroseconds });
  }
  return figures;
}

const round = (value: number) => Math.round(value * 10) / 10;
