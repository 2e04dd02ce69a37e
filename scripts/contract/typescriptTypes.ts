// types.ts: openapi-typescript 7 output for the bundled document.

import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { isJsonObject, type JsonObject, type JsonValue } from './document.js';
import { generatedNotice } from './openapiFiles.js';

type OpenapiSource = Parameters<typeof openapiTS>[0];

export async function renderTypes(api: string, document: JsonObject): Promise<string> {
  // openapi-typescript runs Redocly's bundler over its input; give it a copy so our document stays untouched.
  const ast = await openapiTS(withRulesInDescriptions(structuredClone(document)) as unknown as OpenapiSource, { silent: true });
  const body = astToString(ast);
  return `// ${generatedNotice(api)}\n${COMMENT_HEADER}${body.endsWith('\n') ? body : body + '\n'}`;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** What a schema's keywords require, in words for a doc comment; empty when it says nothing beyond its type. */
function limitsOf(schema: JsonObject): string[] {
  const limits: string[] = [];
  if (typeof schema.minLength === 'number' && schema.minLength > 0) limits.push(`at least ${schema.minLength} character${schema.minLength === 1 ? '' : 's'}`);
  if (typeof schema.maxLength === 'number') limits.push(`at most ${schema.maxLength} characters (longer answers 400 \`value-too-long\` on a body member)`);
  if (typeof schema.pattern === 'string') limits.push(`matches \`${schema.pattern}\``);
  if (typeof schema['x-loopback-pattern'] === 'string') limits.push(`on a server with WEBHOOK_ALLOW_LOOPBACK=on: matches \`${schema['x-loopback-pattern']}\``);
  if (Array.isArray(schema.enum) && schema.enum.length > 20) limits.push(`one of ${schema.enum.length} values (see the type)`);
  if (isJsonObject(schema.dependentRequired)) {
    for (const [member, others] of Object.entries(schema.dependentRequired)) {
      if (Array.isArray(others)) limits.push(`\`${member}\` requires ${others.map((other) => `\`${String(other)}\``).join(', ')}`);
    }
  }
  return limits;
}

function appended(description: JsonValue | undefined, added: string): string {
  // A pattern may hold `*/`, which would end the doc comment.
  const text = added.replaceAll('*/', '*\\/');
  return typeof description === 'string' && description.trim() !== '' ? `${description.trim()}\n\n${text}` : text;
}

/**
 * The document for the types' doc comments: openapi-typescript shows `description` but not `maxLength`, `pattern`
 * or the operation's `x-problem-types`, so they are written into the descriptions of this copy (clients read the
 * limits in their editor; the served documents keep them as keywords).
 */
function withRulesInDescriptions(document: JsonObject): JsonObject {
  const visit = (node: JsonValue, key: string | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, undefined);
      return;
    }
    if (!isJsonObject(node)) return;
    if (key !== undefined && HTTP_METHODS.has(key) && typeof node.operationId === 'string' && Array.isArray(node['x-problem-types'])) {
      node.description = appended(node.description, `Problem types it may answer: ${node['x-problem-types'].map((slug) => `\`${String(slug)}\``).join(', ')}.`);
    }
    if (typeof node.in === 'string' && isJsonObject(node.schema)) {
      const limits = limitsOf(node.schema);
      if (limits.length > 0) node.description = appended(node.description, `Limits: ${limits.join('; ')}.`);
    } else if (key !== 'properties') {
      const limits = limitsOf(node);
      if (limits.length > 0) node.description = appended(node.description, `Limits: ${limits.join('; ')}.`);
    }
    for (const [childKey, child] of Object.entries(node)) {
      if (childKey === 'example' || childKey === 'examples' || childKey === 'enum') continue;
      visit(child, childKey);
    }
  };
  visit(document, undefined);
  return document;
}
