import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Context, Document, Operation } from 'openapi-backend';
import { ContractBackend, type ParameterObject } from './contractBackend.js';
import { storeOutageFailure } from './storeOutage.js';
import { retryWhileBusy, WRITE_RETRY_PAUSES_MS } from '../store/busyWrites.js';
import { isTwoPhaseHandler, type AnyOperationHandler } from './operationContext.js';
import { readOperationRules, type OperationRules } from './operationRules.js';
import { firstDuplicateKey } from './jsonDuplicateKeys.js';
import { PipelineFailure } from './pipelineFailure.js';
import { sourceFileOf } from '../projectFiles.js';
import { ClientClosedError, type ContractApi, type HandledCall, type IncomingCall, type Reply, type Screening } from './reply.js';
import type { IdempotencyDependencies, IdempotentRequest } from '../idempotency/idempotentCalls.js';
import { idempotencyStep, type IdempotencyStep } from './idempotencyStep.js';
import type { PhaseTimings, PipelinePhase } from './phaseTimings.js';

type Headers = IncomingCall['headers'];

/** The outcome of counting a call against its limits: headers every answer carries, and a refusal or none. */
export interface Admission {
  headers: Record<string, string>;
  /** An error in the API's vocabulary (429 rate limit, quota); the call goes no further. */
  refusal?: unknown;
}

/**
 * What makes an API out of the one pipeline: how it authenticates, admits and words its errors,
 * plus its contract, handlers and services. A new operation needs no code here.
 */
export interface ApiProfile<Caller, Services> {
  readonly name: string;
  /** Path prefix the API owns, e.g. `/api/v1`. */
  readonly pathPrefix: string;
  readonly document: Document;
  /** Where `<operationId>.ts` exports `<operationId>`, one handler per operation. */
  readonly operationsDirectory: URL;
  readonly services: Services;
  /** The caller the request's credential proves, looked up once per request whatever schemes it meets; or a thrown error in the API's vocabulary. */
  identify(headers: Headers): Caller | Promise<Caller>;
  /** For each security scheme of the contract: the caller when the scheme accepts its kind of credential, or a thrown error in the API's vocabulary. */
  readonly authenticate: Readonly<Record<string, (caller: Caller) => Caller>>;
  /** Start-up check of an operation's rules against the API's vocabulary (known classes, scopes, roles); throws what to fix. */
  checkRules?(rules: OperationRules): void;
  screen?(call: IncomingCall): Screening;
  /**
   * Scopes, roles and limits: runs after authentication, before the body is read. A promise when the
   * limits are counted outside the process (Redis); it is awaited only then.
   */
  admit(caller: Caller, rules: OperationRules): Admission | Promise<Admission>;
  /**
   * Runs an expensive call (an operation whose x-ratelimit-cost is above 1) behind the API's
   * concurrency caps, after admission and validation; throws the refusal in the API's vocabulary.
   * Without it, expensive calls run like any other.
   */
  runExpensive?(caller: Caller, rules: OperationRules, call: () => Promise<Reply>): Promise<Reply>;
  /** Headers on every answer of an operation (after routing). */
  operationHeaders?(rules: OperationRules): Record<string, string>;
  /** The scope an Idempotency-Key lives in (a workspace); APIs without idempotent operations leave it out. */
  idempotencyScope?(caller: Caller): string;
  /** The API's one error funnel: its own errors and `PipelineFailure`s become its error shape; anything else a 500, logged. */
  errorReply(error: unknown, requestId: string): Reply;
}

export interface PipelineOptions {
  now: () => number;
  /** Needed when the contract has idempotent operations. */
  idempotency?: IdempotencyDependencies;
  /** Pauses between attempts of a write that found the database locked (tests shorten them). */
  writeRetryPausesMs?: readonly number[];
  /** Where each step's time is added, when asked for (PHASE_TIMINGS_FILE). */
  phaseTimings?: PhaseTimings;
  /**
   * `direct` (the default): route, identify and authenticate are the pipeline's own calls of the precompiled
   * router and the profile. `openapi-backend`: its handleRequest runs them, the reference the direct steps are
   * proven against (test/contract/directRouting.test.ts).
   */
  routing?: 'direct' | 'openapi-backend';
}

interface CompiledOperation {
  rules: OperationRules;
  /** The handler, imported on the operation's first call; itself, without a promise, once imported. */
  handler(): AnyOperationHandler | Promise<AnyOperationHandler>;
  headers: Record<string, string>;
  /** The security requirements (the document's when the operation has none): one of them, every scheme of it, must accept the caller. */
  securityRequirements: string[][];
  /** Every scheme of those requirements, once each, in order: each one's check runs. */
  securitySchemes: string[];
  /** Declares parameters or a body: the request is validated and coerced. */
  takesInput: boolean;
  /**
   * Validated requests by path and query string, for an operation whose input is only its path and query
   * (no body, no header or cookie parameter): its validation depends on nothing else.
   */
  keptValidations: Map<string, ValidatedRequest> | undefined;
}

interface ValidatedRequest {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

/** One call through openapi-backend: the incoming call and what the screening added. */
interface CallState<Caller> {
  call: IncomingCall;
  /** Set once routing matched an operation. */
  operationId?: string;
  /** Its caller, looked up by the first security scheme that asks (or proved by the request that carries the call). */
  caller?: Promise<Caller>;
  /** When the pipeline took the call (process.hrtime.bigint()), kept only while phases are timed. */
  startedAt?: bigint;
  /** Set once the call was admitted or refused: what the admission puts on every answer, refusals and failures included. */
  admissionHeaders?: Record<string, string>;
}

/** Ends the phase under way and starts the next; undefined while phases are not timed. */
type Lap = ((phase: PipelinePhase) => void) | undefined;

/** What every step reads: made once, when the API is built. */
interface Pipeline<Caller, Services> {
  profile: ApiProfile<Caller, Services>;
  options: PipelineOptions;
  backend: ContractBackend;
  operations: Map<string, CompiledOperation>;
  /** Pauses of a write that found the store busy. */
  pauses: readonly number[];
  idempotency: IdempotencyStep<Caller>;
}

/**
 * Builds an API from a profile. A call goes through these steps, each a function below:
 *
 *   screen ─► route ─► identify ─► authenticate ─► admit ─► idempotency ─► validate ─► perform ─► reply
 *
 * screen (CORS, the profile's own checks), route (the precompiled router; the request parsed once),
 * identify (the caller, looked up once) and authenticate (each security scheme's check) run as
 * openapi-backend's handleRequest ran them (`routeDirectly`; options.routing keeps handleRequest as the
 * reference), then the operation's handler registered with openapi-backend runs: admit (scopes, roles, limits), idempotency (one look-up of the key: replay or run
 * fresh), validate (read the body, validate and coerce the request), perform (the handler, behind
 * the expensive-call gate, retried while the store is busy, its answer stored under its key) and
 * reply (the steps' headers) in `runOperation`. Every step returns values; anything thrown goes to
 * the profile's one error funnel.
 */
export async function createContractApi<Caller, Services>(
  profile: ApiProfile<Caller, Services>,
  options: PipelineOptions,
): Promise<ContractApi<Caller>> {
  const backend = new ContractBackend(profile.document, { validateOnRequest: false });
  await backend.init();
  const pauses = options.writeRetryPausesMs ?? WRITE_RETRY_PAUSES_MS;
  const pipeline: Pipeline<Caller, Services> = {
    profile,
    options,
    backend,
    operations: await compileOperations(profile, options, backend),
    pauses,
    idempotency: idempotencyStep(options.idempotency, profile.idempotencyScope?.bind(profile), pauses),
  };
  registerSteps(pipeline);
  return {
    name: profile.name,
    pathPrefix: profile.pathPrefix,
    screen: (call) => screen(pipeline, call),
    identify: (call) => identifyOrAnswer(pipeline, call),
    handle: (call) => handle(pipeline, call),
  };
}

/** Each operation's rules, checked against the profile, and its handler (imported on first call). */
async function compileOperations<Caller, Services>(
  profile: ApiProfile<Caller, Services>,
  options: PipelineOptions,
  backend: ContractBackend,
): Promise<Map<string, CompiledOperation>> {
  const operations = new Map<string, CompiledOperation>();
  for (const rule of readOperationRules(backend).values()) {
    profile.checkRules?.(rule);
    if (rule.idempotent && (!options.idempotency || !profile.idempotencyScope)) {
      throw new Error(`${profile.name}: ${rule.operationId} is idempotent, but the API has no idempotency store`);
    }
    const matched = backend.getOperation(rule.operationId)!;
    const handler = handlerOnFirstCall(profile.operationsDirectory, rule.operationId);
    if (rule.idempotent && !options.idempotency?.claims && isTwoPhaseHandler(await handler())) {
      throw new Error(`${profile.name}: ${rule.operationId} is a two-phase idempotent operation, but the API has no idempotency claim store`);
    }
    const securityRequirements = (matched.security ?? []).map((requirement) => Object.keys(requirement));
    operations.set(rule.operationId, {
      rules: rule,
      handler,
      headers: profile.operationHeaders?.(rule) ?? {},
      securityRequirements,
      securitySchemes: [...new Set(securityRequirements.flat())],
      takesInput: (matched.parameters?.length ?? 0) > 0 || matched.requestBody !== undefined,
      keptValidations: readsOnlyPathAndQuery(matched) ? new Map() : undefined,
    });
  }
  return operations;
}

/** Registers the operations' steps with openapi-backend, and for its handleRequest (routing 'openapi-backend') route's outcomes and a security handler per scheme. */
function registerSteps<Caller, Services>(pipeline: Pipeline<Caller, Services>): void {
  const { profile, backend } = pipeline;
  for (const scheme of Object.keys(backend.definition.components?.securitySchemes ?? {})) {
    const accepts = profile.authenticate[scheme];
    if (!accepts) throw new Error(`${profile.name}: the contract's security scheme ${scheme} has no check in the profile`);
    backend.registerSecurityHandler(scheme, async (_context: Context, state: CallState<Caller>) => {
      try {
        return { caller: accepts(await (state.caller ??= identify(pipeline, state.call))) };
      } catch (error) {
        return { error };
      }
    });
  }

  backend.register({
    postRoutingHandler: (context: Context, state: CallState<Caller>) => {
      state.operationId = context.operation?.operationId;
    },
    notFound: (_context: Context, state: CallState<Caller>) => {
      throw new PipelineFailure({ kind: 'not-found', path: state.call.path });
    },
    methodNotAllowed: (_context: Context, state: CallState<Caller>) => {
      const allowed = backend.router.route(state.call.method, state.call.path)?.allowedMethods ?? [];
      throw new PipelineFailure({ kind: 'method-not-allowed', method: state.call.method, path: state.call.path, allowed });
    },
    unauthorizedHandler: (context: Context) => {
      throw firstRefusal(context.security ?? {});
    },
    notImplemented: (context: Context) => {
      throw new Error(`operation ${context.operation?.operationId} has no handler`);
    },
  });

  for (const operation of pipeline.operations.values()) {
    backend.register(operation.rules.operationId, (context: Context, state: CallState<Caller>) => runOperation(pipeline, operation, context, state));
  }
}

/** The whole call: screen, then route and the operation's steps, then the headers every answer carries. */
async function handle<Caller, Services>(pipeline: Pipeline<Caller, Services>, call: IncomingCall): Promise<HandledCall> {
  const state: CallState<Caller> = { call, startedAt: pipeline.options.phaseTimings ? process.hrtime.bigint() : undefined };
  const screening = screen(pipeline, call);
  let reply: Reply;
  try {
    if (screening.reply) {
      reply = screening.reply;
    } else if (pipeline.options.routing === 'openapi-backend') {
      reply = (await pipeline.backend.handleRequest(
        { method: call.method, path: call.path, query: call.rawQuery, headers: call.headers as Record<string, string> },
        state,
      )) as Reply;
    } else {
      reply = await routeDirectly(pipeline, state);
    }
  } catch (error) {
    if (error instanceof ClientClosedError) throw error;
    reply = failureReply(pipeline, error, call);
  }
  const operationHeaders = state.operationId ? pipeline.operations.get(state.operationId)?.headers : undefined;
  return { reply: withHeaders(reply, screening.headers, operationHeaders, state.admissionHeaders), operationId: state.operationId };
}

/**
 * Steps route, identify and authenticate as openapi-backend's handleRequest runs them, without what it does
 * for hooks these APIs do not have: the request is parsed once (after routing, not also before), and the
 * caller is looked up and each scheme checked without a promise per scheme. Then the operation's handler
 * as registered with openapi-backend.
 */
async function routeDirectly<Caller, Services>(pipeline: Pipeline<Caller, Services>, state: CallState<Caller>): Promise<Reply> {
  const { backend } = pipeline;
  const { call } = state;
  const match = backend.router.route(call.method, call.path);
  if (!match) throw new PipelineFailure({ kind: 'not-found', path: call.path });
  if (!match.operation) throw new PipelineFailure({ kind: 'method-not-allowed', method: call.method, path: call.path, allowed: match.allowedMethods });
  const request = { method: call.method, path: call.path, query: call.rawQuery, headers: call.headers as Record<string, string> };
  // A path parameter that is not valid percent-encoding throws here, before the call counts as routed to its operation.
  const parsed = backend.router.parseRequest(request, match.operation);
  const operationId = match.operation.operationId!;
  state.operationId = operationId;
  const operation = pipeline.operations.get(operationId)!;
  const security = operation.securitySchemes.length === 0 ? { authorized: false } : await authenticate(pipeline, operation, call);
  if (!security.authorized && operation.securityRequirements.length > 0) throw firstRefusal(security);
  const context: Partial<Context> = { api: backend, operation: match.operation, request: parsed, security };
  return backend.handlers[operationId]!(context as Context, state) as Promise<Reply>;
}

/**
 * Steps identify and authenticate: each scheme's result as openapi-backend's security handlers give it
 * (`{ caller }`, or `{ error }` with the refusal), and whether one requirement has every scheme satisfied.
 */
async function authenticate<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  call: IncomingCall,
): Promise<NonNullable<Context['security']>> {
  const results: Record<string, { caller: Caller } | { error: unknown } | boolean> = {};
  let caller: Caller | undefined;
  let refusal: { error: unknown } | undefined;
  try {
    caller = call.provenCaller !== undefined ? (call.provenCaller as Caller) : await pipeline.profile.identify(call.headers);
  } catch (error) {
    refusal = { error };
  }
  for (const scheme of operation.securitySchemes) {
    if (refusal) {
      results[scheme] = refusal;
      continue;
    }
    try {
      results[scheme] = { caller: pipeline.profile.authenticate[scheme]!(caller!) };
    } catch (error) {
      results[scheme] = { error };
    }
  }
  const satisfied = (scheme: string) => {
    const result = results[scheme] as { error?: unknown } | undefined;
    return Boolean(result) && !result!.error;
  };
  results.authorized = operation.securityRequirements.some((requirement) => requirement.every(satisfied));
  return results as NonNullable<Context['security']>;
}

/** What an unauthorized call is refused with: the first scheme's refusal says best what was wrong with the credential. */
function firstRefusal(security: NonNullable<Context['security']>): unknown {
  const refusals = Object.values(security).map((result) => (result as { error?: unknown } | undefined)?.error);
  return refusals.find((error) => error !== undefined) ?? new Error('no security handler answered');
}

/** Step screen: what the API checks before routing (CORS); its refusal is the answer. */
function screen<Caller, Services>(pipeline: Pipeline<Caller, Services>, call: IncomingCall): Screening {
  try {
    return pipeline.profile.screen?.(call) ?? { headers: {} };
  } catch (error) {
    return { headers: {}, reply: failureReply(pipeline, error, call) };
  }
}

/** Step identify: the call's caller, the one an enclosing request proved or the one its credential proves now. */
async function identify<Caller, Services>(pipeline: Pipeline<Caller, Services>, call: IncomingCall): Promise<Caller> {
  return call.provenCaller !== undefined ? (call.provenCaller as Caller) : pipeline.profile.identify(call.headers);
}

/** Identify on its own (MCP): the caller, or the API's answer when there is none. */
async function identifyOrAnswer<Caller, Services>(pipeline: Pipeline<Caller, Services>, call: IncomingCall): Promise<{ caller: Caller } | { reply: Reply }> {
  try {
    return { caller: await identify(pipeline, call) };
  } catch (error) {
    return { reply: failureReply(pipeline, error, call) };
  }
}

/** The steps after authentication: admit, then the admitted call's; the admission's headers (put on by `handle`) go on every answer, refusals and failures included. */
async function runOperation<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  context: Context,
  state: CallState<Caller>,
): Promise<Reply> {
  const lap = phaseLap(pipeline.options.phaseTimings, operation.rules.operationId, state.startedAt);
  lap?.('route');
  const caller = operation.rules.isPublic ? undefined : callerOf<Caller>(context);
  const admitting = admit(pipeline, operation, caller);
  const admission: Admission = admitting instanceof Promise ? await admitting : admitting;
  lap?.('admit');
  try {
    if (admission.refusal !== undefined) throw admission.refusal;
    return await runAdmitted(pipeline, operation, context, state.call, caller, lap);
  } catch (error) {
    // Nobody is left to answer: the adapter logs it as the client's doing, not as a failure.
    if (error instanceof ClientClosedError) throw error;
    return failureReply(pipeline, error, state.call);
  } finally {
    state.admissionHeaders = admission.headers;
  }
}

function phaseLap(timings: PhaseTimings | undefined, operationId: string, startedAt: bigint | undefined): Lap {
  if (!timings || startedAt === undefined) return undefined;
  let mark = startedAt;
  return (phase) => {
    mark = timings.add(operationId, phase, mark);
  };
}

const publicAdmission: Admission = { headers: {} };

/** Step admit: scopes, roles and limits of a caller (a promise only when they are counted outside the process). */
function admit<Caller, Services>(pipeline: Pipeline<Caller, Services>, operation: CompiledOperation, caller: Caller | undefined): Admission | Promise<Admission> {
  return caller === undefined ? publicAdmission : pipeline.profile.admit(caller, operation.rules);
}

/** idempotency (src/contract/idempotencyStep.ts) ─► validate ─► perform; a claim the idempotency step took is dropped whatever the answer. */
async function runAdmitted<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  context: Context,
  call: IncomingCall,
  caller: Caller | undefined,
  lap: Lap,
): Promise<Reply> {
  const { idempotency } = pipeline;
  const keyed = idempotency.keyOf(operation.rules, context, caller);
  // Matching is on the key, not the body: a repeat gets the stored answer even when its body would not validate now.
  const lookup = keyed && (await idempotency.lookUp(keyed, isTwoPhaseHandler(await operation.handler())));
  lap?.('idempotency');
  if (lookup && 'replay' in lookup) return lookup.replay;
  try {
    const validating = validate(pipeline, operation, context, call);
    const request = validating instanceof Promise ? await validating : validating;
    lap?.('validate');
    const reply = await perform(pipeline, operation, context, call, caller, request, lookup ? lookup.fresh : undefined);
    lap?.('handler');
    return reply;
  } finally {
    if (lookup?.claim) await idempotency.release(lookup.fresh, lookup.claim);
  }
}

/** Step validate: reads the body only now, after the caller was authenticated and admitted, and validates the whole request (a promise only when there is a body to read). */
function validate<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  context: Context,
  call: IncomingCall,
): ValidatedRequest | Promise<ValidatedRequest> {
  // An operation that declares nothing to validate has nothing to coerce either.
  if (!operation.takesInput) return { params: {}, query: {}, body: undefined };
  if (operation.rules.bodyMediaTypes.length > 0) return readBodyAndValidate(pipeline, operation, context, call);
  if (!operation.keptValidations) return validateRequest(pipeline, context, call, undefined);
  return keptValidation(pipeline, operation.keptValidations, context, call);
}

/** How many validated requests an operation keeps, and the longest path and query string kept. */
const KEPT_VALIDATIONS = 256;
const KEPT_VALIDATION_KEY_LENGTH = 512;

function readsOnlyPathAndQuery(operation: Operation): boolean {
  if (operation.requestBody !== undefined) return false;
  return ((operation.parameters ?? []) as ParameterObject[]).every((parameter) => parameter.in === 'path' || parameter.in === 'query');
}

/**
 * A request validated before (its errors are not kept: a refused request is validated again), frozen, so that no
 * handler can change what the next call gets. Full, the operation's kept requests are dropped at once.
 */
function keptValidation<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  kept: Map<string, ValidatedRequest>,
  context: Context,
  call: IncomingCall,
): ValidatedRequest {
  const key = call.rawQuery === '' ? call.path : `${call.path}?${call.rawQuery}`;
  const found = kept.get(key);
  if (found) return found;
  const validated = validateRequest(pipeline, context, call, undefined);
  if (key.length > KEPT_VALIDATION_KEY_LENGTH) return validated;
  if (kept.size >= KEPT_VALIDATIONS) kept.clear();
  const frozen = Object.freeze({ params: deepFreeze(validated.params), query: deepFreeze(validated.query), body: undefined });
  kept.set(key, frozen);
  return frozen;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

async function readBodyAndValidate<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  context: Context,
  call: IncomingCall,
): Promise<ValidatedRequest> {
  let body: string | undefined;
  const bytes = await call.readBody();
  if (bytes !== undefined && bytes.length > 0) {
    const contentType = String(call.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!operation.rules.bodyMediaTypes.includes(contentType)) {
      throw new PipelineFailure({ kind: 'unsupported-media-type', contentType, accepted: operation.rules.bodyMediaTypes });
    }
    body = decodeBody(bytes);
  }
  return validateRequest(pipeline, context, call, body);
}

function validateRequest<Caller, Services>(pipeline: Pipeline<Caller, Services>, context: Context, call: IncomingCall, body: string | undefined): ValidatedRequest {
  const raw = { method: call.method, path: call.path, query: call.rawQuery, headers: call.headers as Record<string, string>, body };
  const validation = pipeline.backend.validator.validateRequest(raw, context.operation);
  if (validation.errors && validation.errors.length > 0) throw new PipelineFailure({ kind: 'invalid-request', errors: validation.errors });
  // Validation coerced the parameters and filled in their defaults, and proved the body is JSON.
  const coerced = validation.coerced as { params?: Record<string, unknown>; query?: Record<string, unknown> };
  return { params: coerced.params ?? {}, query: coerced.query ?? {}, body: body === undefined ? undefined : JSON.parse(body) };
}

/**
 * Step perform: the handler, behind the API's gate for expensive calls; a write is tried again while
 * the store is busy, and a fresh key's answer is stored in the change's own transaction. A two-phase
 * handler waits outside the database first, then its commit step runs like a synchronous handler.
 */
async function perform<Caller, Services>(
  pipeline: Pipeline<Caller, Services>,
  operation: CompiledOperation,
  context: Context,
  call: IncomingCall,
  caller: Caller | undefined,
  request: ValidatedRequest,
  fresh: IdempotentRequest | undefined,
): Promise<Reply> {
  const { profile, options, pauses } = pipeline;
  const rule = operation.rules;
  const ctx = {
    requestId: call.requestId,
    caller,
    params: request.params,
    query: request.query,
    body: request.body,
    headers: context.request.headers,
    now: options.now,
    services: profile.services,
  } as never;
  const loading = operation.handler();
  const handler = loading instanceof Promise ? await loading : loading;
  if (isTwoPhaseHandler(handler)) {
    const commit = await handler(ctx);
    return retryWhileBusy(fresh ? () => pipeline.idempotency.run(fresh, commit) : commit, pauses);
  }
  const act =
    caller !== undefined && rule.rateLimitCost > 1 && profile.runExpensive
      ? () => profile.runExpensive!(caller, rule, async () => handler(ctx))
      : () => handler(ctx);
  if (rule.method === 'get') return act();
  return retryWhileBusy(fresh ? () => pipeline.idempotency.run(fresh, act) : act, pauses);
}

/** The profile's one error funnel, for anything a step threw. */
function failureReply<Caller, Services>(pipeline: Pipeline<Caller, Services>, error: unknown, call: IncomingCall): Reply {
  return pipeline.profile.errorReply(asPipelineFailure(error, pipeline.pauses), call.requestId);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text: never with replacement characters for invalid UTF-8, never with a member given twice. */
function decodeBody(bytes: Buffer): string {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new PipelineFailure({ kind: 'malformed-request', reason: 'the body is not valid UTF-8', code: 'invalid-utf8' });
  }
  let parsed = false;
  try {
    JSON.parse(text);
    parsed = true;
  } catch {
    // Validation words a body that is not JSON.
  }
  const duplicate = parsed ? firstDuplicateKey(text) : undefined;
  if (duplicate !== undefined) {
    throw new PipelineFailure({ kind: 'malformed-request', reason: `the member ${duplicate || '/'} is given twice`, code: 'duplicate-json-key' });
  }
  return text;
}

/** The caller the first satisfied security scheme proved (openapi-backend ran the checks). */
function callerOf<Caller>(context: Context): Caller {
  for (const [scheme, result] of Object.entries(context.security ?? {})) {
    if (scheme !== 'authorized' && result && typeof result === 'object' && 'caller' in result) return (result as { caller: Caller }).caller;
  }
  throw new Error(`${context.operation.operationId} reached its handler without a caller`);
}

function asPipelineFailure(error: unknown, pauses: readonly number[]): unknown {
  // A path segment that is not valid percent-encoding names nothing.
  if (error instanceof URIError) return new PipelineFailure({ kind: 'not-found', path: '' });
  return storeOutageFailure(error, pauses) ?? error;
}

/** The pipeline's headers in the order given, each set winning over the ones before it; the reply's own headers win over all. */
function withHeaders(reply: Reply, ...sets: (Record<string, string> | undefined)[]): Reply {
  let merged: Record<string, string> | undefined;
  for (const set of sets) {
    for (const name in set) {
      merged ??= {};
      merged[name] = set[name]!;
    }
  }
  if (!merged) return reply;
  return { ...reply, headers: Object.assign(merged, reply.headers) };
}

/**
 * The operation's handler, imported when first asked for: importing every handler and what only handlers use took about
 * 0.1 s of CPU at each start. That the file is there is checked now (transpiled or compiled `.js`, or `.ts`); that it exports
 * the handler is checked by npm run check:contract (scripts/contract/handlerFiles.ts), and again by the import.
 */
function handlerOnFirstCall(directory: URL, operationId: string): () => AnyOperationHandler | Promise<AnyOperationHandler> {
  const [missing] = missingHandlerFiles(directory, [operationId]);
  if (missing) throw new Error(missing);
  let loading: Promise<AnyOperationHandler> | undefined;
  let loaded: AnyOperationHandler | undefined;
  return () =>
    loaded ??
    (loading ??= loadHandler(directory, operationId).then((handler) => {
      loaded = handler;
      return handler;
    }));
}

/** What to add (the TypeScript source) for each operation whose handler file is not in `directory` (transpiled or compiled `.js`, or `.ts`); start-up asks before it changes anything. */
export function missingHandlerFiles(directory: URL, operationIds: readonly string[]): string[] {
  return operationIds
    .filter((operationId) => !['.js', '.ts'].some((extension) => existsSync(new URL(`${operationId}${extension}`, directory))))
    .map((operationId) => `No handler for operation ${operationId}: add ${sourceFileOf(fileURLToPath(new URL(`${operationId}.ts`, directory)))} exporting const ${operationId}`);
}

async function loadHandler(directory: URL, operationId: string): Promise<AnyOperationHandler> {
  const file = new URL(`${operationId}.js`, directory);
  let module: Record<string, unknown>;
  try {
    module = (await import(file.href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`No handler for operation ${operationId}: add ${sourceFileOf(fileURLToPath(file))} exporting const ${operationId}`, { cause: error });
  }
  const handler = module[operationId];
  if (typeof handler !== 'function') throw new Error(`${sourceFileOf(fileURLToPath(file))} must export const ${operationId}, the operation's handler`);
  return handler as AnyOperationHandler;
}
