import { ServiceError } from '../serviceError.js';

// Typed refusals of the Work-Platform stores; the API's funnel (src/workPlatform/problemFunnel.ts) words each kind as a problem.

export type WorkPlatformEntity = 'workspace' | 'user' | 'personal-access-token' | 'project' | 'task' | 'webhook' | 'event' | 'oauth-client' | 'company' | 'contact' | 'deal' | 'contract' | 'connector' | 'repository';

/** What carries a `version` and answers `If-Match`. */
export type VersionedEntity = 'project' | 'task' | 'webhook' | 'company' | 'contact' | 'deal' | 'contract' | 'connector';

/** Every refusal of the Work-Platform stores, each with its own `kind`. */
export type WorkPlatformStoreRefusal =
  | NotFoundError
  | VersionConflictError
  | ProjectHasTasksError
  | InUseError
  | ContractStateError
  | StorageLimitError
  | InvalidValueError
  | ValueRefusedError
  | WebhookLimitError
  | WebhookDisabledError;

export abstract class WorkPlatformStoreError extends ServiceError {}

/** Missing, or in another workspace: the two are deliberately indistinguishable. */
export class NotFoundError extends WorkPlatformStoreError {
  override readonly name = 'NotFoundError';
  readonly kind = 'not-found';
  /** `task-not-found`, `project-not-found`, `user-not-found`, … */
  readonly code: `${WorkPlatformEntity}-not-found`;

  constructor(
    readonly entity: WorkPlatformEntity,
    readonly id: string,
  ) {
    super(`No ${entity.replaceAll('-', ' ')} with id "${id}".`);
    this.code = `${entity}-not-found`;
  }
}

export class VersionConflictError extends WorkPlatformStoreError {
  override readonly name = 'VersionConflictError';
  readonly kind = 'version-conflict';

  constructor(
    readonly entity: VersionedEntity,
    readonly id: string,
    readonly expectedVersion: number,
    readonly currentVersion: number,
  ) {
    super(`The ${entity} ${id} is at version ${currentVersion}, not ${expectedVersion}; read it again and retry.`);
  }
}

export class ProjectHasTasksError extends WorkPlatformStoreError {
  override readonly name = 'ProjectHasTasksError';
  readonly kind = 'project-has-tasks';

  constructor(
    readonly projectId: string,
    readonly taskCount: number,
  ) {
    super(`The project ${projectId} still has ${taskCount} ${taskCount === 1 ? 'task' : 'tasks'}; delete or move them first.`);
  }
}

/** A CRM record that deals or contracts still name: it cannot be deleted until they no longer do. */
export class InUseError extends WorkPlatformStoreError {
  override readonly name = 'InUseError';
  readonly kind = 'in-use';

  constructor(
    readonly code: 'company-has-deals' | 'contact-has-deals' | 'company-has-contracts' | 'deal-has-contracts',
    readonly id: string,
    readonly count: number,
  ) {
    const [entity, named] = code.split('-has-') as [string, string];
    const noun = count === 1 ? named.replace(/s$/, '') : named;
    super(`The ${entity} ${id} is named by ${count} ${noun}; change or delete ${count === 1 ? 'it' : 'them'} first.`);
  }
}

/** The codes of a move the contract lifecycle does not allow (the contract's `ContractStatus`). */
export type ContractStateCode =
  | 'contract-not-sent'
  | 'contract-already-sent'
  | 'contract-already-signed'
  | 'contract-already-declined'
  | 'contract-expired'
  | 'contract-expiry-passed'
  | 'contract-not-editable'
  | 'contract-not-deletable';

export class ContractStateError extends WorkPlatformStoreError {
  override readonly name = 'ContractStateError';
  readonly kind = 'contract-state';

  constructor(
    readonly code: ContractStateCode,
    message: string,
  ) {
    super(message);
  }
}

export class StorageLimitError extends WorkPlatformStoreError {
  override readonly name = 'StorageLimitError';
  readonly kind = 'storage-limit-exceeded';

  constructor(
    /** The API member name: `title`, `name`, `description`. */
    readonly field: string,
    /** Maximum length in characters (Unicode code points). */
    readonly limit: number,
    /** The refused value's length in characters, when known. */
    readonly length: number | null,
  ) {
    super(`${field} is longer than its storage limit of ${limit} characters${length === null ? '' : ` (${length})`}.`);
  }
}

export class InvalidValueError extends WorkPlatformStoreError {
  override readonly name = 'InvalidValueError';
  readonly kind = 'invalid-value';

  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}

/** The codes of the contract's ValidationIssue that the stores use. */
export type RefusedValueCode = 'invalid_format' | 'too_small' | 'too_big';

export interface RefusedValue {
  /** A JSON pointer into the request body: `/url`, `/to`. */
  path: string;
  code: RefusedValueCode;
  message: string;
}

/** Values of the right shape that a rule refuses; every refused field is listed. */
export class ValueRefusedError extends WorkPlatformStoreError {
  override readonly name = 'ValueRefusedError';
  readonly kind = 'value-refused';
  readonly refused: readonly RefusedValue[];

  constructor(refused: RefusedValue[]) {
    super(refused.map((value) => `${value.path} ${value.message}`).join('; ') + '.');
    this.refused = refused;
  }
}

export class WebhookLimitError extends WorkPlatformStoreError {
  override readonly name = 'WebhookLimitError';
  readonly kind = 'webhook-limit-reached';

  constructor(readonly limit: number) {
    super(`This workspace already has ${limit} webhook subscriptions, the most it may have; delete one first.`);
  }
}

export class WebhookDisabledError extends WorkPlatformStoreError {
  override readonly name = 'WebhookDisabledError';
  readonly kind = 'webhook-disabled';

  constructor(readonly webhookId: string) {
    super(`The webhook subscription ${webhookId} is disabled; re-enable it (PATCH with status ACTIVE) before replaying events.`);
  }
}

/** Length as SQLite's length() and JSON Schema's maxLength count it: Unicode code points. */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}
