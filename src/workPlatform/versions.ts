import { createdLocations, type OperationId } from '../../generated/work-platform/rules.js';
import { ApiProblem } from './problems.js';

/** The strong entity tag of a version: `"3"`. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** Each create operation's instance path up to its id (`/v1/tasks/`), from the spec (createdLocations). */
const locationPrefixes = new Map(Object.entries(createdLocations).map(([operationId, template]) => [operationId, template.slice(0, template.lastIndexOf('{'))]));

/** The headers of a 201 of `operationId`: where the new record is (the spec's instance path with its id) and its version. */
export function createdHeaders(operationId: OperationId, record: { id: string; version: number }): { location: string; etag: string } {
  const prefix = locationPrefixes.get(operationId);
  if (prefix === undefined) throw new Error(`${operationId} declares no Location on its 201 in the spec`);
  return { location: `${prefix}${encodeURIComponent(record.id)}`, etag: etagOf(record.version) };
}

/** Reads `If-Match: 3` or `If-Match: "3"`; undefined when absent. A weak or malformed tag is 400. */
export function versionFromIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*(?:"(\d{1,15})"|(\d{1,15}))\s*$/.exec(header);
  if (!match) throw malformedIfMatch();
  return Number(match[1] ?? match[2]);
}

/** 400 `invalid-if-match`: anything but a version (the If-Match parameters' pattern), `*` included, so the version check is never skipped. */
export function malformedIfMatch(): ApiProblem {
  return new ApiProblem('bad-request', {
    detail: 'If-Match must be the version, bare (3) or quoted ("3"); `*`, weak tags and lists are not accepted.',
    code: 'invalid-if-match',
  });
}

/**
 * The version of a required If-Match. The contract has answered its absence (428) and any other
 * shape (400 invalid-if-match) before the handler runs: what is left is `3` or `"3"`.
 */
export function requiredVersion(header: string | undefined): number {
  if (header === undefined) throw new Error('If-Match reached a handler missing: the contract declares it required');
  return Number(header.charCodeAt(0) === 34 ? header.slice(1, -1) : header);
}
