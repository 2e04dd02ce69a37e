import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { AiProviderFailure } from '../../src/ai/provider.js';
import { CredentialRefusedError, type RefusalReason } from '../../src/auth/credentialRefused.js';
import { PipelineFailure, type Failure } from '../../src/contract/pipelineFailure.js';
import { PayloadTooLargeError } from '../../src/contract/reply.js';
import { AnalyticsPoolClosedError } from '../../src/expensiveCalls/analyticsWorkerPool.js';
import { ConcurrencyCapError } from '../../src/expensiveCalls/expensiveCallGate.js';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, IdempotentAnswerUnreadableError } from '../../src/idempotency/idempotentCalls.js';
import { recordingLogger } from '../support/recordingLogger.js';
import { CursorError } from '../../src/paging/cursor.js';
import { PortfolioError, toErrorReply, type PortfolioErrors } from '../../src/portfolio/errors.js';
import {
  ContractStateError,
  InUseError,
  InvalidValueError,
  NotFoundError,
  ProjectHasTasksError,
  StorageLimitError,
  ValueRefusedError,
  VersionConflictError,
  WebhookDisabledError,
  WebhookLimitError,
} from '../../src/store/workPlatformErrors.js';
import { toProblemReply, type WorkPlatformErrors } from '../../src/workPlatform/problemFunnel.js';
import { ApiProblem, DEFAULT_PROBLEM_TYPE_BASE } from '../../src/workPlatform/problems.js';
import { componentSchemaValidator, loadContractDocument } from '../support/contractClient.js';

const missingQuery: ErrorObject = { keyword: 'required', instancePath: '/query', schemaPath: '#/required', params: { missingProperty: 'limit' }, message: "must have required property 'limit'" };

/** One failure of each kind the pipeline and the adapter refuse with. */
const pipelineFailures: { [Kind in Failure['kind']]: PipelineFailure[] } = {
  'not-found': [new PipelineFailure({ kind: 'not-found', path: '/v1/nothing' }), new PipelineFailure({ kind: 'not-found', path: '' })],
  'method-not-allowed': [new PipelineFailure({ kind: 'method-not-allowed', method: 'PUT', path: '/v1/tasks', allowed: ['GET', 'POST'] })],
  'invalid-request': [new PipelineFailure({ kind: 'invalid-request', errors: [missingQuery] })],
  'unsupported-media-type': [new PipelineFailure({ kind: 'unsupported-media-type', contentType: 'text/plain', accepted: ['application/json'] })],
  'payload-too-large': [new PayloadTooLargeError(1024)],
  unavailable: [new PipelineFailure({ kind: 'unavailable', reason: 'busy', retryAfterSeconds: 2 }), new PipelineFailure({ kind: 'unavailable', reason: 'unreachable', retryAfterSeconds: 5 })],
  'malformed-request': [new PipelineFailure({ kind: 'malformed-request', reason: 'more than one Authorization header', code: 'duplicate-authorization' })],
  'headers-too-large': [new PipelineFailure({ kind: 'headers-too-large', limitBytes: 16384 })],
  'request-timeout': [new PipelineFailure({ kind: 'request-timeout', timeoutMs: 10_000 })],
};

const refusals: RefusalReason[] = ['unauthenticated', 'key-revoked', 'key-expired', 'session-expired', 'session-revoked'];

/** Members of every kind the Work-Platform funnel words: the type checker asks for one more when a kind joins its table. */
const workPlatformMembers: { [Kind in WorkPlatformErrors['kind']]: Extract<WorkPlatformErrors, { kind: Kind }>[] } = {
  problem: [new ApiProblem('conflict', { detail: 'Already there.', code: 'already-there' })],
  'pipeline-failure': Object.values(pipelineFailures).flat(),
  'credential-refused': refusals.map((reason) => new CredentialRefusedError(reason)),
  'concurrency-cap': [new ConcurrencyCapError('workspace', 2), new ConcurrencyCapError('queue', 64)],
  'analytics-pool-closed': [new AnalyticsPoolClosedError()],
  'idempotency-key-reused': [new IdempotencyKeyReusedError('POST', '/v1/tasks')],
  'idempotency-key-in-use': [new IdempotencyKeyInUseError()],
  'idempotent-answer-unreadable': [new IdempotentAnswerUnreadableError()],
  'invalid-cursor': [new CursorError('unreadable', 'x'), new CursorError('mismatch', 'x')],
  'ai-provider-failure': (['timeout', 'status', 'malformed-answer', 'unreachable'] as const).map((reason) => new AiProviderFailure(reason, 'at http://10.0.0.7/v1', { charge: { kind: 'bound' } })),
  'not-found': [new NotFoundError('task', 'tsk_1')],
  'version-conflict': [new VersionConflictError('task', 'tsk_1', 1, 2)],
  'project-has-tasks': [new ProjectHasTasksError('prj_1', 3)],
  'in-use': [new InUseError('company-has-deals', 'cmp_1', 2)],
  'contract-state': [new ContractStateError('contract-not-sent', 'The contract ctr_1 was not sent.')],
  'storage-limit-exceeded': [new StorageLimitError('title', 200, 201)],
  'invalid-value': [new InvalidValueError('dueDate', 'is not a date.')],
  'value-refused': [new ValueRefusedError([{ path: '/url', code: 'invalid_format', message: 'must not be a private address' }])],
  'webhook-limit-reached': [new WebhookLimitError(25)],
  'webhook-disabled': [new WebhookDisabledError('whk_1')],
};

const portfolioMembers: { [Kind in PortfolioErrors['kind']]: Extract<PortfolioErrors, { kind: Kind }>[] } = {
  'error-envelope': [new PortfolioError('not_found', 'Not found.')],
  'credential-refused': refusals.map((reason) => new CredentialRefusedError(reason)),
  // The portfolio API reads no request bodies: a 415 or a 413 cannot be its answer.
  'pipeline-failure': Object.values(pipelineFailures)
    .flat()
    .filter(({ failure }) => failure.kind !== 'unsupported-media-type' && failure.kind !== 'payload-too-large'),
};

const declaredProblemTypes = (loadContractDocument('work-platform') as { components: { schemas: { Problem: { 'x-problem-types': Record<string, { status: number }> } } } })
  .components.schemas.Problem['x-problem-types'];
const isProblem = componentSchemaValidator('work-platform', 'Problem');
const isErrorEnvelope = componentSchemaValidator('portfolio', 'ErrorEnvelope');

describe('the Work-Platform funnel', () => {
  it.each(Object.values(workPlatformMembers).flat().map((error) => [`${error.kind} (${error.constructor.name}: ${error.message})`, error] as const))(
    'answers %s with a problem type the spec declares, at its status',
    (_, error) => {
      const logger = recordingLogger();
      const reply = toProblemReply(error, 'req_1', DEFAULT_PROBLEM_TYPE_BASE, logger);
      expect(isProblem(reply.body), JSON.stringify(isProblem.errors)).toBe(true);
      const slug = (reply.body as { type: string }).type.slice(DEFAULT_PROBLEM_TYPE_BASE.length + 1);
      expect(declaredProblemTypes).toHaveProperty(slug);
      expect(reply.status).toBe(declaredProblemTypes[slug]!.status);
      expect(slug).not.toBe('internal');
      expect(logger.lines.filter((line) => line.message === 'unhandled error')).toEqual([]);
    },
  );

  it('answers an error of another API, or of none, with the logged 500', () => {
    for (const error of [new PortfolioError('not_found', 'Not found.'), new Error('SELECT * FROM tasks failed at /srv/app.db')]) {
      const logger = recordingLogger();
      const reply = toProblemReply(error, 'req_2', DEFAULT_PROBLEM_TYPE_BASE, logger);
      expect(reply.status).toBe(500);
      expect(JSON.stringify(reply.body)).not.toMatch(/SELECT|\/srv|Not found/);
      expect(logger.lines).toEqual([{ level: 'error', message: 'unhandled error', fields: { requestId: 'req_2', error } }]);
    }
  });
});

describe('the portfolio funnel', () => {
  it.each(Object.values(portfolioMembers).flat().map((error) => [`${error.kind} (${error.message})`, error] as const))('answers %s with an ErrorEnvelope the spec declares', (_, error) => {
    const logger = recordingLogger();
    const reply = toErrorReply(error, 'req_3', logger);
    expect(isErrorEnvelope(reply.body), JSON.stringify(isErrorEnvelope.errors)).toBe(true);
    expect((reply.body as { error: { code: string } }).error.code).not.toBe('internal_error');
    expect(logger.lines).toEqual([]);
  });

  it('answers an error of another API, or a request body it never reads, with the logged 500', () => {
    for (const error of [new ApiProblem('conflict', { detail: 'd' }), new PayloadTooLargeError(10), new Error('boom')]) {
      const logger = recordingLogger();
      const reply = toErrorReply(error, 'req_4', logger);
      expect(reply.status).toBe(500);
      expect(logger.lines).toHaveLength(1);
    }
  });
});

/**
 * Errors that stay outside the family, each for a reason: they never become an answer, or an
 * answer needs what only the place that catches them knows. A new `extends Error` must join the
 * family (extend ServiceError and be worded by the funnels) or be added here with its reason.
 */
const OUTSIDE_THE_FAMILY: Record<string, string> = {
  ServiceError: 'the family itself',
  ConfigError: 'start-up refuses a configuration; no request is served',
  PlanTableError: "start-up refuses the spec's x-rate-limits; no request is served",
  CliError: 'the admin CLI prints it',
  PortfolioImportError: 'the import CLI prints it',
  StoreError: "a store call's argument refused (the CLI's); on the APIs the contract validates first, so reaching a funnel is a bug: the 500",
  StoreUnavailableError: "with the drivers' own connection errors, turned by storeOutageFailure into the pipeline's `unavailable` before any funnel",
  MigrationForeignKeyError: 'migrations refuse to finish; no request is served',
  TransactionOpenElsewhereError: 'caught by the rate limiter and the busy-write retries',
  SavepointsNeeded: 'caught by the PostgreSQL engine itself, which runs the transaction again with savepoints; never reaches a funnel',
  AnalyticsWorkerCrashedError: 'a thread that died: the 500',
  AnalyticsWorkerError: "a thread's error with its SQLite code: busy is the outage step's 503, anything else the 500",
  GithubFailure: "worded by the connector operations, with the connector's id and, for a 401, the credential marked expired",
  ClientClosedError: 'the client went away: nobody to answer',
  WebhookVerificationError: "the receivers' verifier, for code that receives our webhooks",
  DeliveryTimeout: 'caught by the webhook delivery attempt',
  NoAnswerInTime: 'caught by the readiness check, and by the Redis counters (Redis counts as unreachable)',
};

describe('the error family', () => {
  it('has no other root than ServiceError, except the errors listed with their reason', () => {
    const source = fileURLToPath(new URL('../../src/', import.meta.url));
    const roots: string[] = [];
    const visit = (directory: string) => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        const path = join(directory, entry.name);
        // The browser-side client SDK ships its own errors to its users.
        if (entry.isDirectory()) {
          if (relative(source, path) !== 'client') visit(path);
        } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/class (\w+) extends Error\b/g)) roots.push(match[1]!);
        }
      }
    };
    visit(source);
    expect(roots.sort()).toEqual(Object.keys(OUTSIDE_THE_FAMILY).sort());
  });
});
