// House rules every operation must follow; the server, the Postman collection and the docs depend on them.

import { sourceFileOf, type BundledSpec } from './bundle.js';
import {
  dereference,
  describeOperation,
  escapePointerSegment,
  isJsonObject,
  listOperations,
  lowestSuccessStatus,
  operationParameters,
  takesIdempotencyKey,
  pointerOfTarget,
  resolvePointer,
  type JsonObject,
  type JsonValue,
  type OperationEntry,
} from './document.js';
import type { ContractProblem } from './problems.js';

/** Responses every operation that needs a credential must declare (checked once the API's x-conventions are added). */
export const REQUIRED_PROTECTED_RESPONSES = ['400', '401', '429', '500', '503'] as const;

type Report = (message: string, at?: string) => void;

/** Checks the bundled spec against the conventions; returns every problem found (empty when it conforms). */
export function checkConventions(bundled: BundledSpec): ContractProblem[] {
  const { document } = bundled;
  const problems: ContractProblem[] = [];
  const operations = listOperations(document);

  if (!isJsonObject(document.paths) || operations.length === 0) {
    problems.push({ file: bundled.rootLabel, message: 'the spec declares no operations under paths' });
  }

  const declaredTags = new Set<string>();
  if (Array.isArray(document.tags)) {
    for (const tag of document.tags) {
      if (isJsonObject(tag) && typeof tag.name === 'string') declaredTags.add(tag.name);
    }
  }

  const firstOwner = new Map<string, OperationEntry>();
  for (const entry of operations) {
    // `at` is the pointer of the node to change when it is not the operation itself (e.g. a shared component).
    const report: Report = (message, at = entry.pointer) => {
      problems.push({ file: sourceFileOf(bundled, at), where: describeOperation(entry), message });
    };
    const { operation } = entry;

    const { operationId } = entry;
    if (operationId === undefined) {
      report('missing operationId; add `operationId: <verbNoun>` (unique in the API; handlers are named after it)');
    } else {
      const owner = firstOwner.get(operationId);
      if (owner) {
        report(
          `operationId ${operationId} is already used by ${owner.method.toUpperCase()} ${owner.path} (${sourceFileOf(bundled, owner.pointer)}); operationIds must be unique`,
        );
      } else {
        firstOwner.set(operationId, entry);
      }
    }

    const tags = operation.tags;
    if (!Array.isArray(tags) || tags.length === 0 || !tags.every((tag) => typeof tag === 'string' && tag !== '')) {
      report('missing tags; add `tags: [<Tag>]` naming a tag declared in the root document (the Postman folder)');
    } else {
      for (const tag of tags) {
        if (typeof tag === 'string' && !declaredTags.has(tag)) {
          report(`tag ${tag} is not declared in the root document's tags list; add it there (it orders the Postman folders)`);
        }
      }
    }

    if (typeof operation.summary !== 'string' || operation.summary.trim() === '') {
      report('missing summary; add `summary:` (it names the Postman request)');
    }

    if (entry.rateLimitClass === undefined) {
      report('missing x-ratelimit-class; add `x-ratelimit-class: <class>` (a string, e.g. read)');
    }

    if (entry.rateLimitCost === undefined) {
      report('x-ratelimit-cost must be a whole number of units, 1 or more (leave it out for 1)');
    }

    if (entry.requiredScopes === undefined) {
      report('missing x-required-scopes; add `x-required-scopes: [...]` (an array of strings, `[]` when no scope is needed)');
    }

    if (entry.credential === 'optional') {
      report('lists `{}` among its security requirements (a credential is optional), which the server does not serve; write `security: []` for a public operation, or leave `{}` out');
    }

    checkSuccessExample(document, entry, report);
    checkIdempotency(document, entry, report);
    checkOauthRequirement(document, entry, report);
    checkParameters(document, entry, report);
    checkResponses(document, entry, report);
  }
  problems.push(...checkEventSources(bundled, new Set(operations.map((entry) => entry.operationId).filter((id) => id !== undefined))));
  return problems;
}

/**
 * A JSON success answer shows an example (of its media type, or of its schema), which the reference
 * pages, the Postman collection and the client README show. The downloads are documents, not data.
 */
function checkSuccessExample(document: JsonObject, entry: OperationEntry, report: Report): void {
  if (Array.isArray(entry.operation.tags) && entry.operation.tags.includes('Downloads')) return;
  const responses = isJsonObject(entry.operation.responses) ? entry.operation.responses : {};
  for (const [status, raw] of Object.entries(responses)) {
    if (!/^2\d\d$/.test(status)) continue;
    const response = dereference(document, raw);
    const media = isJsonObject(response) && isJsonObject(response.content) ? dereference(document, response.content['application/json']) : undefined;
    if (!isJsonObject(media)) continue;
    const schema = dereference(document, media.schema);
    // A missing or unresolved schema is reported by the response check already.
    if (!isJsonObject(schema)) continue;
    if (media.example !== undefined || media.examples !== undefined || (isJsonObject(schema) && schema.example !== undefined)) continue;
    const at = isJsonObject(media.schema) && typeof media.schema.$ref === 'string' ? pointerOfTarget(document, media.schema, '') : `${entry.pointer}/responses/${status}`;
    report(`the ${status} answer has no example; add \`example:\` to its schema (or its media type), a body the server could really send`, at);
  }
}

/** `job:<name>`: an event a scheduled job of the server records, not an operation. */
const JOB_SOURCE = /^job:[a-z][a-z0-9-]*$/;

/**
 * Every event of `webhooks` says what records it in `x-emitted-by`: operationIds of `paths`, or
 * `job:<name>` for a scheduled job. Subscribers read it in the reference; the events suite checks
 * each recorded event against it.
 */
function checkEventSources(bundled: BundledSpec, operationIds: ReadonlySet<string>): ContractProblem[] {
  const { document } = bundled;
  if (!isJsonObject(document.webhooks)) return [];
  const problems: ContractProblem[] = [];
  for (const entry of listOperations({ ...document, paths: document.webhooks })) {
    const at = entry.pointer.replace(/^\/paths\//, '/webhooks/');
    const report = (message: string) => problems.push({ file: sourceFileOf(bundled, at), where: `webhook ${entry.path}`, message });
    const sources = entry.operation['x-emitted-by'];
    if (!Array.isArray(sources) || sources.length === 0) {
      report('missing x-emitted-by; add `x-emitted-by: [<operationId>, ...]` naming every operation (or `job:<name>`) that records this event');
      continue;
    }
    for (const source of sources) {
      if (typeof source !== 'string' || !(operationIds.has(source) || JOB_SOURCE.test(source))) {
        report(`x-emitted-by names ${JSON.stringify(source)}, which is neither an operationId of paths nor job:<name>`);
      }
    }
  }
  return problems;
}

/** The names of the spec's OAuth 2.0 security schemes. */
function oauthSchemeNames(document: JsonObject): string[] {
  const components = isJsonObject(document.components) ? document.components : {};
  const schemes = isJsonObject(components.securitySchemes) ? components.securitySchemes : {};
  return Object.entries(schemes)
    .filter(([, scheme]) => isJsonObject(dereference(document, scheme)) && (dereference(document, scheme) as JsonObject).type === 'oauth2')
    .map(([name]) => name);
}

/**
 * In an API with an OAuth 2.0 scheme, every protected operation accepts its tokens, and the
 * scopes of its OAuth requirement are exactly `x-required-scopes` (what the server enforces), so
 * that a client library asks for what the operation really needs.
 */
function checkOauthRequirement(document: JsonObject, entry: OperationEntry, report: Report): void {
  const schemes = oauthSchemeNames(document);
  const { security, requiredScopes: required } = entry;
  if (schemes.length === 0 || entry.isPublic || required === undefined) return;
  const wanted = [...required].sort().join(' ');
  const listed = `[${required.join(', ')}]`;
  for (const scheme of schemes) {
    const scopes = security.find((requirement) => Object.hasOwn(requirement, scheme))?.[scheme];
    if (!scopes) {
      report(`does not accept ${scheme} tokens; add \`- ${scheme}: ${listed}\` to its \`security\` (beside the other schemes)`);
      continue;
    }
    if ([...scopes].sort().join(' ') !== wanted) {
      report(`its ${scheme} requirement must list exactly x-required-scopes; write \`- ${scheme}: ${listed}\``);
    }
  }
}

/** `x-idempotent` (POST by default) and the `Idempotency-Key` header parameter say the same thing. */
function checkIdempotency(document: JsonObject, entry: OperationEntry, report: Report): void {
  const { idempotent } = entry;
  if (idempotent === undefined) {
    report('x-idempotent must be true or false (it defaults to true on POST and false elsewhere)');
    return;
  }
  const declared = entry.operation['x-idempotent'];
  const takesKey = takesIdempotencyKey(document, entry);
  if (idempotent && !takesKey) {
    report(
      `is idempotent (${declared === undefined ? 'POST by default' : 'x-idempotent: true'}) but does not declare the Idempotency-Key header parameter; add it (the shared IdempotencyKey parameter) or set \`x-idempotent: false\``,
    );
  } else if (!idempotent && takesKey) {
    report('declares the Idempotency-Key header parameter but is not idempotent; set `x-idempotent: true` or remove the parameter');
  }
  const responses = isJsonObject(entry.operation.responses) ? entry.operation.responses : {};
  if (takesKey && !('422' in responses)) {
    report("takes Idempotency-Key, and a malformed key answers 422 validation; declare '422' (the shared Validation response), in the API's x-conventions (`of: idempotencyKey`) or on the operation");
  }
}

function checkParameters(document: JsonObject, entry: OperationEntry, report: Report): void {
  for (const list of [entry.pathItem.parameters, entry.operation.parameters]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      report('parameters must be a list');
      continue;
    }
    for (const raw of list) {
      if (!isJsonObject(dereference(document, raw))) {
        report(`parameter ${isJsonObject(raw) && typeof raw.$ref === 'string' ? raw.$ref : ''} does not resolve to a parameter object`);
      }
    }
  }
  const parameters = operationParameters(document, entry);
  const templateNames = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  for (const name of templateNames) {
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === name)) {
      report(`the path has {${name}} but no path parameter named ${name}; declare it with \`in: path\`, \`required: true\` and an example`);
    }
  }
  for (const { name, in: location, parameter, pointer } of parameters) {
    if (location !== 'path') continue;
    if (!templateNames.includes(name)) {
      report(`path parameter ${name} does not appear in the path template; remove it or add {${name}} to the path`, pointer);
    }
    if (parameter.example === undefined || parameter.example === null) {
      report(`path parameter ${name} has no example; add \`example: <value>\` (Postman sends it as the path variable)`, pointer);
    }
  }
}

function checkResponses(document: JsonObject, entry: OperationEntry, report: Report): void {
  const responses = entry.operation.responses;
  if (!isJsonObject(responses)) {
    report('missing responses');
    return;
  }
  if (lowestSuccessStatus(entry.operation) === undefined) {
    report('declares no 2xx response; add the success response (the Postman test asserts the lowest 2xx status)');
  }
  if (!entry.isPublic) {
    const missing = REQUIRED_PROTECTED_RESPONSES.filter((status) => !Object.hasOwn(responses, status));
    if (missing.length > 0) {
      report(
        `needs a credential but does not declare ${missing.join(', ')}; add ${missing
          .map((status) => `'${status}'`)
          .join(', ')} to the API's x-conventions (or to the operation's responses), or \`security: []\` if the operation is public`,
      );
    }
  }
  for (const [status, rawResponse] of Object.entries(responses)) {
    const responseAt = pointerOfTarget(document, rawResponse, `${entry.pointer}/responses/${status}`);
    const response = dereference(document, rawResponse);
    if (!isJsonObject(response)) {
      report(`response ${status} ${describeRef(rawResponse)}does not resolve to a response object`);
      continue;
    }
    const headers = response.headers;
    if (headers !== undefined) {
      if (!isJsonObject(headers)) {
        report(`response ${status}: headers must be a mapping`, responseAt);
      } else {
        for (const [name, rawHeader] of Object.entries(headers)) {
          const headerAt = pointerOfTarget(document, rawHeader, `${responseAt}/headers/${escapePointerSegment(name)}`);
          const header = dereference(document, rawHeader);
          if (!isJsonObject(header)) {
            report(`response ${status} header ${name} ${describeRef(rawHeader)}does not resolve`, responseAt);
          } else if (header.schema === undefined && header.content === undefined) {
            report(`response ${status} header ${name} has neither schema nor content`, headerAt);
          } else {
            const broken = brokenRefs(document, header);
            if (broken.length > 0) report(`response ${status} header ${name} uses unresolvable ${broken.join(', ')}`, headerAt);
          }
        }
      }
    }
    const content = response.content;
    if (content === undefined) continue;
    if (!isJsonObject(content)) {
      report(`response ${status}: content must be a mapping of media types`, responseAt);
      continue;
    }
    for (const [mediaType, media] of Object.entries(content)) {
      if (!isJsonObject(media) || media.schema === undefined) {
        report(`response ${status} ${mediaType} has no schema; add one (responses are validated against it)`, responseAt);
        continue;
      }
      if (dereference(document, media.schema) === undefined) {
        report(`response ${status} ${mediaType} schema ${describeRef(media.schema)}does not resolve`, responseAt);
        continue;
      }
      const broken = brokenRefs(document, media.schema);
      if (broken.length > 0) report(`response ${status} ${mediaType} schema uses unresolvable ${broken.join(', ')}`, responseAt);
    }
  }
}

function describeRef(node: JsonValue | undefined): string {
  return isJsonObject(node) && typeof node.$ref === 'string' ? `(${node.$ref}) ` : '';
}

/** Internal references reachable from `node` (following them) that point nowhere. */
function brokenRefs(document: JsonObject, node: JsonValue): string[] {
  const broken = new Set<string>();
  const visited = new Set<string>();
  const visit = (value: JsonValue): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (!isJsonObject(value)) return;
    const ref = value.$ref;
    if (typeof ref === 'string') {
      if (visited.has(ref)) return;
      visited.add(ref);
      const target = ref.startsWith('#') ? resolvePointer(document, ref.slice(1)) : undefined;
      if (target === undefined) broken.add(ref);
      else visit(target);
    }
    for (const [key, child] of Object.entries(value)) if (key !== '$ref') visit(child);
  };
  visit(node);
  return [...broken];
}
