import { OpenAPIBackend, OpenAPIValidator, type Document, type Operation, type ValidationContext, type ValidationResult } from 'openapi-backend';
import type { Ajv, ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import { ajv2020Customizer } from './ajv.js';
import { compiledSchemasCache } from './compiledSchemas.js';
import { parsedQueryOf, PrecompiledRouter, queryValues } from './precompiledRouter.js';

export type ParameterObject = { name: string; in: 'query' | 'path' | 'header' | 'cookie'; schema?: Record<string, unknown> };

/** The plain decimal text of each scalar type; coercion alone would also take `1e1`, `0x10` or ` 5`. */
const CANONICAL_TEXT: Record<string, RegExp> = {
  integer: /^-?\d+$/,
  number: /^-?\d+(\.\d+)?$/,
  boolean: /^(true|false)$/,
};

/**
 * openapi-backend set up for OpenAPI 3.1: strict mode, a 2020-12 Ajv, parameter coercion and
 * defaults, and the precompiled router. Built for a fast start: the document is dereferenced
 * synchronously (quick mode) and each operation's request validator is compiled on its first call.
 */
export class ContractBackend extends OpenAPIBackend {
  declare router: PrecompiledRouter;

  /**
   * `validateOnRequest: false`: handleRequest() validates nothing and the caller runs
   * `validator.validateRequest()` itself when it has the body (the pipeline reads it after auth).
   */
  constructor(
    document: Document,
    private readonly settings: { validateOnRequest: boolean } = { validateOnRequest: true },
  ) {
    super({
      definition: document,
      strict: true,
      coerceTypes: true,
      ignoreTrailingSlashes: true,
      ajvOpts: { useDefaults: true, allErrors: true },
      // Quick mode dereferences with dereference-json-schema in a few milliseconds where
      // json-schema-ref-parser took about 0.25 s of CPU at each start; the documents are bundled with internal
      // `#/components/...` references only, which both resolve alike (test/contract/contractBackend.test.ts).
      quick: true,
      customizeAjv: ajv2020Customizer,
      // The validator is built in init() below, with the precompiled router and without the
      // response validators: responses are checked by ResponseContract, and only when asked.
      validate: false,
    });
  }

  /**
   * The built-in check knows only OpenAPI 3.0 and rejects valid 3.1 documents; the specs are
   * linted with Redocly and checked by the contract build instead. This keeps a minimal guard.
   */
  override validateDefinition(): Document {
    const document = this.document as Document | undefined;
    if (!document || typeof document !== 'object' || !String(document.openapi).startsWith('3.1')) {
      throw new Error('The API document must be an OpenAPI 3.1 document.');
    }
    if (!document.paths || typeof document.paths !== 'object') {
      throw new Error('The API document has no paths.');
    }
    // Quick mode's dereference turns a reference to nothing into null, which would switch off the
    // validation of what it stood for: a start refuses such a document instead.
    const unresolved = unresolvedReferences(document);
    if (unresolved.length > 0) {
      throw new Error(`The API document has references that resolve to nothing: ${unresolved.slice(0, 5).join(', ')}${unresolved.length > 5 ? ', …' : ''}`);
    }
    return document;
  }

  /** The document is an object already: nothing to read or parse (json-schema-ref-parser would copy it). */
  override async loadDocument(): Promise<Document> {
    this.document = this.inputDocument as Document;
    return this.document;
  }

  override async init(): Promise<this> {
    // Quick mode skips the definition check; it runs here, before anything is built from the document.
    await this.loadDocument();
    this.validateDefinition();
    await super.init();
    const router = new PrecompiledRouter({
      definition: this.definition,
      apiRoot: this.apiRoot,
      ignoreTrailingSlashes: this.ignoreTrailingSlashes,
    });
    this.router = router;
    this.validator = new ContractValidator(compiledSchemasCache(this.inputDocument as object, 'request validators'), {
      definition: this.definition,
      ajvOpts: this.ajvOpts,
      customizeAjv: this.customizeAjv,
      router,
      lazyCompileValidators: true,
      coerceTypes: this.coerceTypes,
    });
    // Each operation's request validator is compiled on its first call: compiling them all took about half a
    // second of CPU at each start. That every one compiles is proved by test/contract/contractBackend.test.ts.
    this.validate = this.settings.validateOnRequest;
    const declaredQueryNames = new Map<string, Set<string>>();
    for (const operation of router.getOperations()) {
      const names = ((operation.parameters ?? []) as ParameterObject[]).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
      declaredQueryNames.set(operation.operationId ?? '', new Set(names));
    }
    const validateRequest = this.validator.validateRequest.bind(this.validator);
    this.validator.validateRequest = (req, operation) => {
      const declared = declaredQueryNames.get((operation as Operation).operationId ?? '') ?? new Set<string>();
      const { query, values } = declaredQuery(req, declared);
      return withSingleValuedQueryRule(validateRequest({ ...req, query }, operation), values, operation as Operation);
    };
    return this;
  }
}

/**
 * openapi-backend's validator asks for an Ajv for each validator it compiles, and builds a draft-07
 * instance with its meta-schema every time before the customizer answers with a 2020-12 one. Here
 * each set of options gets one instance, built when first asked for and shared by every operation:
 * building them per operation was much of what compiling the validators cost.
 */
class ContractValidator extends OpenAPIValidator {
  private readonly ajvByOptions = new Map<string, Ajv>();

  constructor(
    /** Each operation's compiled validators, shared with the other servers of the process on the same contract (compiledSchemas.ts). */
    private readonly compiled: Map<string, ValidateFunction[]>,
    options: ConstructorParameters<typeof OpenAPIValidator>[0],
  ) {
    super(options);
  }

  override getRequestValidatorsForOperation(operationId: string): ValidateFunction[] {
    let validators = this.compiled.get(operationId);
    if (validators === undefined) {
      validators = super.getRequestValidatorsForOperation(operationId);
      this.compiled.set(operationId, validators);
    }
    return validators;
  }

  override getAjv(validationContext: ValidationContext, options: AjvOptions = {}): Ajv {
    const key = JSON.stringify(options);
    let ajv = this.ajvByOptions.get(key);
    if (!ajv) {
      ajv = super.getAjv(validationContext, options);
      this.ajvByOptions.set(key, ajv);
    }
    return ajv;
  }
}

/**
 * openapi-backend refuses query parameters an operation does not declare; the contracts here
 * ignore them (the seed's operations declare no 400 for them), so they are dropped before
 * validation and never reach a handler. Returns the declared parameters as openapi-backend's
 * parser gives them (a value per name, a list for a name given more than once) and each one's
 * raw values, from one parse.
 */
function declaredQuery(req: { query?: unknown; path: string }, declared: Set<string>): { query: Record<string, string | string[]>; values: Map<string, string[]> } {
  const values = queryValues(rawQueryOf(req), (name) => declared.has(name));
  return { query: parsedQueryOf(values), values };
}

/**
 * Query coercion would turn an empty value into 0, read `1e1` as 10 and pick one of several
 * repeated values, so a scalar query parameter that is empty, given more than once or not
 * written as a plain decimal is refused here, beside the schema's own errors.
 */
function withSingleValuedQueryRule(result: ValidationResult, rawValues: Map<string, string[]>, operation: Operation): ValidationResult {
  if (rawValues.size === 0) return result;
  const ruleErrors: ErrorObject[] = [];
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (parameter.in !== 'query' || parameter.schema?.type === 'array') continue;
    const values = rawValues.get(parameter.name);
    if (!values) continue;
    if (values.length > 1) {
      ruleErrors.push(queryError(parameter.name, 'must be given at most once'));
    } else if (values[0] === '') {
      ruleErrors.push(queryError(parameter.name, 'must not be empty'));
    } else {
      const canonical = CANONICAL_TEXT[String(parameter.schema?.type)];
      if (canonical && !canonical.test(values[0]!)) {
        ruleErrors.push(queryError(parameter.name, `must be written as a plain ${String(parameter.schema?.type)}`, 'type'));
      }
    }
  }
  if (ruleErrors.length === 0) return result;
  // The rule's message explains such a value better than the schema error its coercion caused.
  const ruledPaths = new Set(ruleErrors.map((error) => error.instancePath));
  const schemaErrors = (result.errors ?? []).filter((error) => !ruledPaths.has(error.instancePath));
  return { ...result, valid: false, errors: [...schemaErrors, ...ruleErrors] };
}

function queryError(name: string, message: string, keyword = 'singleValue'): ErrorObject {
  return { keyword, instancePath: `/query/${name}`, schemaPath: '#/parameters', params: {}, message };
}

function rawQueryOf(req: { query?: unknown; path: string }): string {
  return typeof req.query === 'string' ? req.query : (req.path.split('?')[1] ?? '');
}

/** Every `$ref` of the document that is not a JSON pointer into it (RFC 6901, as a URI fragment) naming a value it has. */
export function unresolvedReferences(document: object): string[] {
  const unresolved = new Set<string>();
  const resolves = (reference: string): boolean => {
    if (!reference.startsWith('#')) return false;
    let target: unknown = document;
    for (const token of reference.slice(1).split('/').slice(1)) {
      const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
      if (target === null || typeof target !== 'object' || !Object.hasOwn(target, key)) return false;
      target = (target as Record<string, unknown>)[key];
    }
    return true;
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      for (const [key, member] of Object.entries(value)) {
        if (key === '$ref' && typeof member === 'string') {
          if (!resolves(member)) unresolved.add(member);
        } else visit(member);
      }
    }
  };
  visit(document);
  return [...unresolved];
}
