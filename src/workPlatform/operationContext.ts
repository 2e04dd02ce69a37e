import type { operations } from '../../generated/work-platform/types.js';
import type { PlanLimitTable } from '../limits/planLimits.js';
import type { CursorCodec } from '../paging/cursor.js';
import type { ListPageCache } from '../store/listPageCache.js';
import type { EventActor } from '../store/outboxEvents.js';
import type { ProjectStore } from '../store/projects.js';
import type { QuotaCounterStore } from '../store/quotaCounters.js';
import type { TaskStore } from '../store/tasks.js';
import type { WebhookSubscriptionStore } from '../store/webhookSubscriptions.js';
import type { Workspace, WorkspaceStore } from '../store/workspaces.js';
import type { Caller } from './auth.js';

/** The operations this server answers; `on…` are the webhook events it sends (the contract's `webhooks`). */
export type WorkPlatformOperationId = Exclude<keyof operations, `on${string}`>;

type ParametersOf<Op extends WorkPlatformOperationId> = operations[Op]['parameters'];
type ResponsesOf<Op extends WorkPlatformOperationId> = operations[Op]['responses'];
type SuccessStatus<Op extends WorkPlatformOperationId> = Extract<keyof ResponsesOf<Op>, 200 | 201 | 202 | 204>;
type BodyOf<Response> = Response extends { content: infer Content }
  ? Content extends { 'application/json': infer Body }
    ? Body | string | Buffer
    : Content[keyof Content]
  : undefined;
type RequestBodyOf<Op extends WorkPlatformOperationId> = operations[Op]['requestBody'] extends
  | { content: { 'application/json': infer Body } }
  | undefined
  ? Body
  : never;

/** Query parameters after validation: coerced, with the contract's defaults filled in. */
export type QueryOf<Op extends WorkPlatformOperationId> = Required<NonNullable<ParametersOf<Op>['query']>>;
export type PathParamsOf<Op extends WorkPlatformOperationId> = NonNullable<ParametersOf<Op>['path']>;

/** What the services the handlers use look like; built once at start-up. */
export interface WorkPlatformServices {
  workspaces: WorkspaceStore;
  tasks: TaskStore;
  projects: ProjectStore;
  /** Webhook subscriptions, their secrets, replays and delivery log. */
  webhooks: WebhookSubscriptionStore;
  cursors: CursorCodec;
  /** Encoded list pages, served again while their collection is unchanged. */
  listPages: ListPageCache;
  planTable: PlanLimitTable;
  quota: QuotaCounterStore;
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string; postmanEnvironmentJson: string };
}

/** What a Work-Platform operation handler sees. Handlers are synchronous: a write and its outbox row commit together. */
export interface WorkPlatformContext<Op extends WorkPlatformOperationId> {
  requestId: string;
  /** The authenticated caller; public operations get none. */
  caller: Caller | undefined;
  workspace: Workspace | undefined;
  params: PathParamsOf<Op>;
  query: QueryOf<Op>;
  body: RequestBodyOf<Op>;
  /** Request headers, names in lower case. */
  headers: Record<string, string | undefined>;
  now: () => number;
  services: WorkPlatformServices;
}

/** The headers of a reply whose body is JSON already encoded (a string or bytes). */
export const JSON_CONTENT = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

/** A success reply of the operation; failures are thrown as `ApiProblem`s. */
export type WorkPlatformReply<Op extends WorkPlatformOperationId> = {
  [Status in SuccessStatus<Op>]: { status: Status; headers?: Record<string, string>; body: BodyOf<ResponsesOf<Op>[Status]> };
}[SuccessStatus<Op>];

export type WorkPlatformHandler<Op extends WorkPlatformOperationId> = (ctx: WorkPlatformContext<Op>) => WorkPlatformReply<Op>;

/** One handler per operation of the contract: a new operation in the spec is a type error here until handled. */
export type WorkPlatformHandlers = { [Op in WorkPlatformOperationId]: WorkPlatformHandler<Op> };

/** The caller and workspace of an authenticated operation (the pipeline guarantees both). */
export function authenticated<Op extends WorkPlatformOperationId>(
  ctx: WorkPlatformContext<Op>,
): { caller: Caller; workspace: Workspace; actor: EventActor } {
  if (!ctx.caller || !ctx.workspace) throw new Error('operation reached without an authenticated caller');
  return { caller: ctx.caller, workspace: ctx.workspace, actor: { id: ctx.caller.userId, kind: 'USER' } };
}
