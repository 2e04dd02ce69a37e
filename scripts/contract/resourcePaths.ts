// The kinds of record a contract's paths name, read from the paths alone: each path parameter's
// instance path (`/v1/tasks/{taskId}`), its collection (`/v1/tasks`) and the operations that
// create, list, read and delete its instances. The conformance runner and the Postman run both
// start from it.

/** What the derivation needs of an operation: its method (any case) and its path template. */
export interface PathOperation {
  method: string;
  template: string;
}

export interface ResourcePath<Op> {
  /** The path of one instance, e.g. `/v1/tasks/{taskId}`. */
  template: string;
  /** The path of the collection, e.g. `/v1/tasks`. */
  collection: string;
  /** The instance's path parameter, e.g. `taskId`. */
  parameter: string;
  create?: Op;
  list?: Op;
  read?: Op;
  remove?: Op;
}

/** The instance template a path parameter of `template` ends: `/v1/tasks/{taskId}/deliveries` and `taskId` → `/v1/tasks/{taskId}`. */
export function instanceTemplate(template: string, parameter: string): string {
  return template.slice(0, template.indexOf(`{${parameter}}`) + parameter.length + 2);
}

/** Every record kind the operations' path parameters name, by instance template, in the operations' order. */
export function resourcePathsOf<Op>(operations: readonly Op[], view: (operation: Op) => PathOperation): Map<string, ResourcePath<Op>> {
  const viewed = operations.map((operation) => ({ operation, ...view(operation) }));
  const find = (method: string, template: string) => viewed.find((candidate) => candidate.method.toUpperCase() === method && candidate.template === template)?.operation;
  const kinds = new Map<string, ResourcePath<Op>>();
  for (const { template: path } of viewed) {
    for (const match of path.matchAll(/\{([^}]+)\}/g)) {
      const parameter = match[1]!;
      const template = instanceTemplate(path, parameter);
      if (kinds.has(template)) continue;
      const collection = template.slice(0, template.lastIndexOf('/'));
      kinds.set(template, {
        template,
        collection,
        parameter,
        create: find('POST', collection),
        list: find('GET', collection),
        read: find('GET', template),
        remove: find('DELETE', template),
      });
    }
  }
  return kinds;
}
