// What ContractBackend no longer does at start-up, proved here for the committed contracts instead: its quick
// dereference builds what json-schema-ref-parser built, and every operation's request validator compiles.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { ContractBackend } from '../../src/contract/contractBackend.js';

const readContract = (api: string) => JSON.parse(readFileSync(new URL(`../../generated/${api}/openapi.json`, import.meta.url), 'utf8')) as Document;

/** openapi-backend's own start-up: json-schema-ref-parser dereferences the document (its 3.0-only check left out). */
class RefParserBackend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document!;
  }
}

async function dereferencedByRefParser(document: Document) {
  return (await new RefParserBackend({ definition: document, strict: true, validate: false }).init()).definition;
}

describe.each(['portfolio', 'work-platform'])('ContractBackend over the %s contract', (api) => {
  it('dereferences the document as json-schema-ref-parser does, leaving the served document as it is', async () => {
    const document = readContract(api);
    const backend = await new ContractBackend(document, { validateOnRequest: false }).init();
    expect(backend.definition).toStrictEqual(await dereferencedByRefParser(readContract(api)));
    expect(JSON.stringify(backend.definition)).not.toContain('"$ref"');
    expect(document).toStrictEqual(readContract(api));
  });

  it('compiles the request validator of every operation', async () => {
    const backend = await new ContractBackend(readContract(api), { validateOnRequest: false }).init();
    const operationIds = backend.router.getOperations().map((operation) => operation.operationId);
    expect(operationIds.length).toBeGreaterThan(10);
    // Compiled on each operation's first call at run time: a schema Ajv refuses fails here, before a release.
    backend.validator.preCompileRequestValidators();
    expect(Object.keys(backend.validator.requestValidators).sort()).toEqual([...operationIds].sort());
  });
});

describe('a document with a reference to nothing', () => {
  it('is refused at start-up, naming the reference, instead of validating nothing where it stands', async () => {
    const document = readContract('portfolio') as unknown as { components: { schemas: Record<string, unknown> } };
    const [name] = Object.keys(document.components.schemas);
    delete document.components.schemas[name!];
    await expect(new ContractBackend(document as unknown as Document, { validateOnRequest: false }).init()).rejects.toThrow(
      `The API document has references that resolve to nothing: #/components/schemas/${name}`,
    );
  });
});
