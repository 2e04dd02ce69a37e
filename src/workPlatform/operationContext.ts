import type { PublicOperationId } from '../../generated/work-platform/rules.js';
import type { operations } from '../../generated/work-platform/types.js';
import type { OperationContext, OperationReply, TwoPhaseHandler } from '../contract/operationContext.js';
import type { AiServices } from './aiCalls.js';
import type { ConnectorServices } from './connectorCalls.js';
import type { PlanLimitTable } from '../limits/planLimits.js';
import type { CursorCodec } from '../paging/cursor.js';
import type { ListPageCache } from '../store/listPageCache.js';
import type { CompanyStore } from '../store/companies.js';
import type { ContactStore } from '../store/contacts.js';
import type { ContractStore } from '../store/contracts.js';
import type { DealStore } from '../store/deals.js';
import type { AnalyticsStore } from '../store/analytics.js';
import type { ProjectStore } from '../store/projects.js';
import type { QuotaCounterStore } from '../store/quotaCounters.js';
import type { TaskStore } from '../store/tasks.js';
import type { WebhookSubscriptions } from '../webhooks/subscriptions.js';
import type { WorkspaceStore } from '../store/workspaces.js';
import type { Caller } from '../auth/bearerTokens.js';

/** The operations this server answers; `on…` are the webhook events it sends (the contract's `webhooks`). */
export type WorkPlatformOperationId = Exclude<keyof operations, `on${string}`>;

/** What the handlers use, built once at start-up. */
export interface WorkPlatformServices {
  workspaces: WorkspaceStore;
  tasks: TaskStore;
  projects: ProjectStore;
  /** Companies, contacts and deals. */
  crm: { companies: CompanyStore; contacts: ContactStore; deals: DealStore };
  /** Contracts and their lifecycle. */
  contracts: ContractStore;
  /** Read-only aggregates of tasks and deals (/v1/analytics). */
  analytics: AnalyticsStore;
  /** Webhook subscriptions, their secrets, replays and delivery log. */
  webhooks: WebhookSubscriptions;
  cursors: CursorCodec;
  /** Encoded list pages, served again while their collection is unchanged. */
  listPages: ListPageCache;
  planTable: PlanLimitTable;
  /** The month's token calls: the shared count plus the calls this process has counted alone and not yet written. */
  quota: Pick<QuotaCounterStore, 'quotaUsage'>;
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string; postmanEnvironmentJson: string; changelogJson: string; referencePageHtml: string };
  /** The AI routes: the provider, the price table, the spend ledger and the reads they summarize. */
  ai: AiServices;
  /** Connectors: their store, the imported issues, the GitHub client and the box their credentials are sealed with. */
  connectors: ConnectorServices;
}

/** A Work-Platform handler's context: the authenticated caller (with its workspace) on every operation that needs a token. */
export type WorkPlatformContext<Op extends WorkPlatformOperationId> = OperationContext<
  operations,
  Op,
  Op extends PublicOperationId ? undefined : Caller,
  WorkPlatformServices
>;

/** A success reply of the operation; failures are thrown as `ApiProblem`s. */
export type WorkPlatformReply<Op extends WorkPlatformOperationId> = OperationReply<operations, Op>;

export type WorkPlatformHandler<Op extends WorkPlatformOperationId> = (
  ctx: WorkPlatformContext<Op>,
) => WorkPlatformReply<Op> | Promise<WorkPlatformReply<Op>>;

/** A handler that waits for an outside service before it answers (see `TwoPhaseHandler`). */
export type WorkPlatformTwoPhaseHandler<Op extends WorkPlatformOperationId> = TwoPhaseHandler<WorkPlatformContext<Op>, WorkPlatformReply<Op>>;

export { twoPhaseHandler } from '../contract/operationContext.js';

export { JSON_CONTENT } from '../contract/operationContext.js';
