// The types every API's handlers are written against, derived from openapi-typescript's
// `operations` interface of that API (generated/<api>/types.ts).

import type { Reply } from './reply.js';

interface OperationShape {
  parameters: { query?: unknown; path?: unknown; header?: unknown };
  requestBody?: unknown;
  responses: object;
}

export type OperationsOf<Ops> = { [Op in keyof Ops]: OperationShape };

type ParametersOf<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = Ops[Op]['parameters'];
type ResponsesOf<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = Ops[Op]['responses'];
type SuccessStatus<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = Extract<keyof ResponsesOf<Ops, Op>, 200 | 201 | 202 | 204>;
type BodyOf<Response> = Response extends { content: infer Content }
  ? Content extends { 'application/json': infer Body }
    ? Body | string | Buffer
    : Content[keyof Content]
  : undefined;

/** Query parameters after validation: coerced, with the contract's defaults filled in. */
export type QueryOf<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = Required<NonNullable<ParametersOf<Ops, Op>['query']>>;
export type PathParamsOf<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = NonNullable<ParametersOf<Ops, Op>['path']>;
export type RequestBodyOf<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = Ops[Op]['requestBody'] extends
  | { content: { 'application/json': infer Body } }
  | undefined
  ? Body
  : never;

/**
 * What a handler sees. `caller` is the authenticated caller on every operation that needs a
 * credential (the pipeline does not call the handler otherwise), and undefined on public ones.
 */
export interface OperationContext<Ops extends OperationsOf<Ops>, Op extends keyof Ops, Caller, Services> {
  requestId: string;
  caller: Caller;
  params: PathParamsOf<Ops, Op>;
  query: QueryOf<Ops, Op>;
  body: RequestBodyOf<Ops, Op>;
  /** Request headers, names in lower case. */
  headers: Record<string, string | undefined>;
  now: () => number;
  services: Services;
}

/**
 * A success reply of the operation, as the contract declares it; failures are thrown in the API's
 * vocabulary. A JSON body may come already encoded (a string or bytes, encoded once and reused).
 */
export type OperationReply<Ops extends OperationsOf<Ops>, Op extends keyof Ops> = {
  [Status in SuccessStatus<Ops, Op>]: { status: Status; headers?: Record<string, string>; body: BodyOf<ResponsesOf<Ops, Op>[Status]> };
}[SuccessStatus<Ops, Op>];

/**
 * A handler answers at once or after awaiting its store: a write, its outbox row and an idempotent
 * answer still commit in one transaction (src/store/writeTransactions.ts), which the store calls
 * inside it join.
 */
export type OperationHandler<Ctx, R> = (ctx: Ctx) => R | Promise<R>;

/**
 * A handler that must wait for something outside the database before it can answer (an AI
 * provider's HTTP answer): it does that outside any transaction (it must never hold one across an
 * await) and resolves to its commit step, which the pipeline runs as it runs a one-phase handler,
 * in one transaction with the stored idempotent answer. A failure before the commit step undoes
 * what the handler wrote on the way (a spend reservation, say) before it throws.
 */
export type TwoPhaseHandler<Ctx, R> = ((ctx: Ctx) => Promise<() => R | Promise<R>>) & { readonly [twoPhaseMark]: true };

const twoPhaseMark = Symbol('two-phase handler');

/** Marks a handler as two-phase (see `TwoPhaseHandler`), so the pipeline awaits it outside any transaction. */
export function twoPhaseHandler<Ctx, R>(handler: (ctx: Ctx) => Promise<() => R | Promise<R>>): TwoPhaseHandler<Ctx, R> {
  return Object.assign(handler, { [twoPhaseMark]: true as const });
}

export function isTwoPhaseHandler(handler: unknown): handler is TwoPhaseHandler<never, Reply> {
  return typeof handler === 'function' && (handler as Partial<Record<typeof twoPhaseMark, true>>)[twoPhaseMark] === true;
}

/** Any handler, as the pipeline calls it. */
export type AnyOperationHandler = ((ctx: never) => Reply | Promise<Reply>) | TwoPhaseHandler<never, Reply>;

/** The headers of a reply whose body is JSON already encoded (a string or bytes). */
export const JSON_CONTENT = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });
