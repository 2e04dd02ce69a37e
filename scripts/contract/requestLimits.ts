// A request schema states the storage limits of what it writes: each member of `<Resource>Create` and
// `<Resource>Update` that the resource schema bounds with `maxLength` carries the same `maxLength`, so clients,
// agents and generators see the limit the store enforces (db/schema.ts reads it from the resource schemas).

import { dereference, isJsonObject, type JsonObject } from './document.js';
import type { ContractProblem } from './problems.js';

export function checkRequestLimits(document: JsonObject, rootLabel: string): ContractProblem[] {
  const schemas = isJsonObject(document.components) && isJsonObject(document.components.schemas) ? document.components.schemas : {};
  const problems: ContractProblem[] = [];
  for (const [name, raw] of Object.entries(schemas)) {
    const resourceName = /^(.+)(?:Create|Update)$/.exec(name)?.[1];
    const resource = resourceName === undefined ? undefined : dereference(document, schemas[resourceName]);
    const request = dereference(document, raw);
    if (!isJsonObject(resource) || !isJsonObject(resource.properties) || !isJsonObject(request) || !isJsonObject(request.properties)) continue;
    for (const [member, rawStored] of Object.entries(resource.properties)) {
      const stored = dereference(document, rawStored);
      const sent = dereference(document, request.properties[member]);
      if (!isJsonObject(stored) || typeof stored.maxLength !== 'number' || !isJsonObject(sent)) continue;
      if (sent.maxLength !== stored.maxLength) {
        problems.push({
          file: rootLabel,
          where: `#/components/schemas/${name}/properties/${member}`,
          message: `write maxLength: ${stored.maxLength}, the storage limit ${resourceName}.${member} declares (found ${sent.maxLength === undefined ? 'none' : JSON.stringify(sent.maxLength)})`,
        });
      }
    }
  }
  return problems;
}
