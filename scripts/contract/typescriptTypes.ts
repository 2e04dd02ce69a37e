// types.ts: openapi-typescript 7 output for the bundled document.

import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import type { JsonObject } from './document.js';
import { generatedNotice } from './openapiFiles.js';

type OpenapiSource = Parameters<typeof openapiTS>[0];

export async function renderTypes(api: string, document: JsonObject): Promise<string> {
  // openapi-typescript runs Redocly's bundler over its input; give it a copy so our document stays untouched.
  const ast = await openapiTS(structuredClone(document) as unknown as OpenapiSource, { silent: true });
  const body = astToString(ast);
  return `// ${generatedNotice(api)}\n${COMMENT_HEADER}${body.endsWith('\n') ? body : body + '\n'}`;
}
