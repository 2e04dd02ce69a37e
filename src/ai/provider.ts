// What the AI routes ask of a language model, at the level of the task (draft tasks, summarize a
// project), so that a provider may be a hosted model, a local server or rules (the offline one).
import type { components } from '../../generated/work-platform/types.js';
import type { ProjectOpenWork } from '../store/projectOpenWork.js';
import { ServiceError } from '../serviceError.js';

export type TaskDraft = components['schemas']['AiTaskDraft'];

/** Tokens as the provider counts them. */
export interface AiTokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface AiAnswer<Result> {
  result: Result;
  usage: AiTokenUsage;
}

/**
 * A provider call made ready but not yet sent: the most usage it can report is known before it
 * runs, so the spend cap can reserve that much first.
 */
export interface PreparedAiCall<Result> {
  /** Upper bounds of what `run()` can report: every byte of the prompt sent, and the answer's `max_tokens`. */
  readonly bound: AiTokenUsage;
  /** Calls the provider; a failure is an `AiProviderFailure`. */
  run(): Promise<AiAnswer<Result>>;
}

export interface DraftTasksInput {
  projectName: string;
  text: string;
  maxDrafts: number;
  /** The request's time: relative dates ("tomorrow", "friday") count from its UTC day. */
  now: number;
}

export interface ProjectSummaryInput {
  project: { id: string; name: string };
  openWork: ProjectOpenWork;
  now: number;
}

export interface ProjectSummaryResult {
  summary: string;
  /** Tasks of `openWork.mostUrgent` only, each with why it needs attention. */
  highlights: { taskId: string; reason: string }[];
}

export interface AiProvider {
  /** The model named in every answer. */
  readonly model: string;
  draftTasks(input: DraftTasksInput): PreparedAiCall<TaskDraft[]>;
  summarizeProject(input: ProjectSummaryInput): PreparedAiCall<ProjectSummaryResult>;
}

export type AiProviderFailureReason = 'timeout' | 'status' | 'malformed-answer' | 'unreachable';

/**
 * What a failed call may have cost at the provider: nothing (it was never sent, or the provider
 * refused it with an error status), the usage it reported (its answer arrived but was unusable),
 * or, when the request was sent and no usage could be read (a timeout, a broken or unreadable
 * answer), anything up to the call's bound.
 */
export type AiFailureCharge = { kind: 'none' } | { kind: 'usage'; usage: AiTokenUsage } | { kind: 'bound' };

/**
 * A provider call that failed. `message` and `cause` are for the log only: they may hold the
 * provider's own words and address, never sent to a client.
 */
export class AiProviderFailure extends ServiceError {
  override readonly name = 'AiProviderFailure';
  readonly kind = 'ai-provider-failure';
  readonly charge: AiFailureCharge;
  constructor(
    readonly reason: AiProviderFailureReason,
    message: string,
    options?: { cause?: unknown; charge?: AiFailureCharge },
  ) {
    super(message, options);
    this.charge = options?.charge ?? { kind: 'none' };
  }

  /** The same failure, charged as `charge`. */
  chargedAs(charge: AiFailureCharge): AiProviderFailure {
    return new AiProviderFailure(this.reason, this.message, { cause: this.cause, charge });
  }
}
