/**
 * The family of errors the server answers a client about. Each member names what went wrong in
 * `kind` (unique in the family) and carries the data its answer needs. Each API words every kind
 * it meets in one table, looked up by its one error funnel (toProblemReply, toErrorReply,
 * oauthErrorReply): mapping an error is a look-up, not a chain of `instanceof`. Anything outside
 * the family is the API's 500, its detail kept in the log.
 */
export abstract class ServiceError extends Error {
  abstract readonly kind: string;
}

/** An API's answer to each kind of the family it meets (`Known`); the type checker holds the table complete. */
export type ErrorWording<Answer, Known extends ServiceError> = {
  readonly [Kind in Known['kind']]: (error: Extract<Known, { kind: Kind }>) => Answer;
};

/** The API's answer to a member of the family its table words; undefined for anything else (its 500). */
export function wordError<Answer, Known extends ServiceError>(error: unknown, wording: ErrorWording<Answer, Known>): Answer | undefined {
  if (!(error instanceof ServiceError) || !Object.hasOwn(wording, error.kind)) return undefined;
  const answer = wording[error.kind as Known['kind']] as (error: ServiceError) => Answer;
  return answer(error);
}
