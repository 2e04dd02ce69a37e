// Problems (RFC 9457) as a discriminated union: `slug` is the last segment of `type` (its base is
// set per deployment), one of the contract's problem types, so `switch (problem.slug)` narrows.

import type { components } from '../../generated/work-platform/types.js';
import { problemTypes, type ProblemSlug } from '../../generated/work-platform/rules.js';

export type { ProblemSlug };
export type Problem = components['schemas']['Problem'];

type StatusOf<S extends ProblemSlug> = (typeof problemTypes)[S]['status'];

/** A problem of one type: its `status` and `title` are the ones the contract fixes for the type. */
export type TypedProblem = { [S in ProblemSlug]: Problem & { slug: S; status: StatusOf<S> } }[ProblemSlug];

export const PROBLEM_SLUGS = Object.keys(problemTypes) as ProblemSlug[];

/** The problem with its `slug`; undefined for a body that is no problem of this API (a proxy's error page, say). */
export function problemOf(body: unknown): TypedProblem | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string') return undefined;
  const slug = type.slice(type.lastIndexOf('/') + 1);
  if (!(PROBLEM_SLUGS as string[]).includes(slug)) return undefined;
  return { ...(body as Problem), slug } as TypedProblem;
}

/** Thrown by `unwrap` and the list iterator when the API answers a problem. */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  constructor(
    readonly problem: TypedProblem,
    readonly response: Response,
  ) {
    super(`${problem.status} ${problem.slug}${problem.code ? ` (${problem.code})` : ''}: ${problem.detail}`);
  }
}
