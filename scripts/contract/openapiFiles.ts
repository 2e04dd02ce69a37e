// The bundled document as the committed openapi.json and openapi.yaml.

import YAML from 'yaml';
import { faithfulYaml } from '../../src/contract/faithfulYaml.js';
import type { JsonObject } from './document.js';

/** The do-not-edit notice every generated file starts with. */
export function generatedNotice(api: string): string {
  return `Generated from specs/${api} by npm run build:contract — do not edit.`;
}

/** The published document: the bundled spec with the notice as its first member. */
export function publishedDocument(api: string, document: JsonObject): JsonObject {
  const { 'x-generated': _ignored, ...rest } = document;
  return { 'x-generated': generatedNotice(api), ...rest };
}

export function renderOpenapiJson(api: string, document: JsonObject): string {
  return JSON.stringify(publishedDocument(api, document), null, 2) + '\n';
}

/** YAML options shared with the served copy so both render the same way. */
export const YAML_STRINGIFY_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

/** Quoted so that js-yaml 3 and 4, PyYAML and the yaml package read every value as openapi.json has it. */
export function renderOpenapiYaml(api: string, document: JsonObject): string {
  const body = faithfulYaml(YAML, new YAML.Document(publishedDocument(api, document), YAML_STRINGIFY_OPTIONS)).toString(YAML_STRINGIFY_OPTIONS);
  return `# ${generatedNotice(api)}\n${body.endsWith('\n') ? body : body + '\n'}`;
}
