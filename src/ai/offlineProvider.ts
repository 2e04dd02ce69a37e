// The built-in provider: rules, no language model. It lets `npm start`, the demo and the tests
// answer the AI routes without a network, and says so in every answer (`model: offline-rules-1`).
// What it does and does not do is listed in docs/work-platform.md ("AI routes").
import { DAY_MS, endOfUtcDay, parseUtcDate, startOfUtcDay, WEEKDAYS } from './calendar.js';
import { cutToCharacters, draftTasksPrompt, plainLine, projectSummaryPrompt, promptBound, SUMMARY_HIGHLIGHTS, TITLE_MAX_CHARACTERS, type ChatPrompt } from './prompts.js';
import type { AiProvider, DraftTasksInput, PreparedAiCall, ProjectSummaryInput, ProjectSummaryResult, TaskDraft } from './provider.js';
import type { Task } from '../store/tasks.js';

export const OFFLINE_MODEL = 'offline-rules-1';

export function createOfflineProvider(): AiProvider {
  return {
    model: OFFLINE_MODEL,
    draftTasks: (input) => offlineCall(draftTasksPrompt(input), () => draftsFromText(input)),
    summarizeProject: (input) => offlineCall(projectSummaryPrompt(input), () => summaryOfOpenWork(input)),
  };
}

const tokensOf = (json: string) => Math.ceil(Buffer.byteLength(json, 'utf8') / 4);

/**
 * Usage as a model would report it, estimated: one token per 4 bytes of UTF-8 (rounded up) of the
 * prompt a provider would have been sent and of the answer's JSON. Both stay within the bound the
 * spend cap reserves (its answers are built to fit `max_tokens`).
 */
function offlineCall<Result>(prompt: ChatPrompt, answer: () => Result): PreparedAiCall<Result> {
  const bound = promptBound(prompt);
  return {
    bound,
    async run() {
      const result = answer();
      const usage = { promptTokens: tokensOf(JSON.stringify(prompt.messages)), completionTokens: tokensOf(JSON.stringify(result)) };
      if (usage.completionTokens > bound.completionTokens) throw new Error(`the offline answer takes ${usage.completionTokens} tokens, over its bound of ${bound.completionTokens}`);
      return { result, usage };
    },
  };
}

// Drafts -----------------------------------------------------------------------------------------

/** Bullets, checkboxes and numbering at the start of a line ("- ", "* [ ] ", "1. ", "2) ", "(3) ", "a) "). */
const LIST_MARKER = /^(?:\s*(?:[-*•+–—·]\s+|\[[ xX]?\]\s*|\d{1,3}[.)]\s+|\(\d{1,3}\)\s+|[a-z]\)\s+))+/u;
const SENTENCE_END = /(?<=[.!?])\s+(?=\S)/u;
const HIGH_PRIORITY = /\b(?:urgent(?:ly)?|asap|critical|blocker|blocking|immediately|high priority)\b|!/iu;
const LOW_PRIORITY = /\b(?:some ?day|maybe|nice[ -]to[ -]have|low priority|eventually|if time permits)\b/iu;
const DUE_PHRASE = new RegExp(`\\b(\\d{4}-\\d{2}-\\d{2}|today|tomorrow|next week|${WEEKDAYS.join('|')})\\b`, 'giu');

/** One draft per non-empty line, bullet or sentence, in order, at most `maxDrafts`; a line ending in a colon is a heading. */
export function draftsFromText(input: DraftTasksInput): TaskDraft[] {
  const drafts: TaskDraft[] = [];
  for (const line of input.text.split(/\r\n|\r|\n/u)) {
    const item = line.replace(LIST_MARKER, '');
    if (item.trimEnd().endsWith(':')) continue;
    for (const sentence of item.split(SENTENCE_END)) {
      const title = cutToCharacters(plainLine(sentence).replace(/\.+$/u, ''), TITLE_MAX_CHARACTERS);
      if (!/[\p{L}\p{N}]/u.test(title)) continue;
      drafts.push({ title, priority: priorityOf(sentence), dueOn: dueOnOf(sentence, input.now) });
      if (drafts.length === input.maxDrafts) return drafts;
    }
  }
  return drafts;
}

function priorityOf(text: string): TaskDraft['priority'] {
  if (HIGH_PRIORITY.test(text)) return 'HIGH';
  if (LOW_PRIORITY.test(text)) return 'LOW';
  return 'MEDIUM';
}

/** The first day the text names, as the end of that UTC day; relative days count from the UTC day of `now`. */
function dueOnOf(text: string, now: number): string | null {
  const today = startOfUtcDay(now);
  for (const [phrase] of text.matchAll(DUE_PHRASE)) {
    const day = dayNamed(phrase.toLowerCase(), today);
    if (day !== undefined) return endOfUtcDay(day);
  }
  return null;
}

function dayNamed(phrase: string, today: number): number | undefined {
  if (phrase === 'today') return today;
  if (phrase === 'tomorrow') return today + DAY_MS;
  if (phrase === 'next week') return today + 7 * DAY_MS;
  const weekday = (WEEKDAYS as readonly string[]).indexOf(phrase);
  // The next such day after today: a week ahead when today is that day.
  if (weekday >= 0) return today + (((weekday - new Date(today).getUTCDay() + 6) % 7) + 1) * DAY_MS;
  return parseUtcDate(phrase);
}

// Summary ----------------------------------------------------------------------------------------

const QUOTED_TITLE_CHARACTERS = 80;
const SOON_MS = 2 * DAY_MS;

/** Counts by status and priority, the overdue tasks and the most urgent ones, in plain sentences. */
export function summaryOfOpenWork(input: ProjectSummaryInput): ProjectSummaryResult {
  const { openWork, now } = input;
  const name = cutToCharacters(plainLine(input.project.name), QUOTED_TITLE_CHARACTERS);
  if (openWork.openTaskCount === 0) return { summary: `${name} has no open tasks.`, highlights: [] };

  const byStatus = listed([
    [openWork.countsByStatus.TODO, 'to do'],
    [openWork.countsByStatus.IN_PROGRESS, 'in progress'],
    [openWork.countsByStatus.BLOCKED, 'blocked'],
  ]);
  const byPriority = listed([
    [openWork.countsByPriority.HIGH, 'high'],
    [openWork.countsByPriority.MEDIUM, 'medium'],
    [openWork.countsByPriority.LOW, 'low'],
  ]);
  const sentences = [`${name} has ${plural(openWork.openTaskCount, 'open task')}: ${byStatus}; by priority ${byPriority}.`];

  const dueTime = (task: Task) => (task.dueOn === null ? undefined : Date.parse(task.dueOn));
  const overdue = openWork.mostUrgent.filter((task) => (dueTime(task) ?? Infinity) < now);
  if (openWork.overdueTaskCount === 0) {
    sentences.push('None is overdue.');
  } else {
    const oldest = overdue.reduce<Task | undefined>((found, task) => (found === undefined || dueTime(task)! < dueTime(found)! ? task : found), undefined);
    sentences.push(
      `${plural(openWork.overdueTaskCount, 'task')} ${openWork.overdueTaskCount === 1 ? 'is' : 'are'} overdue` +
        (oldest ? `, the longest ${quoted(oldest)} (due ${oldest.dueOn!.slice(0, 10)}).` : '.'),
    );
  }
  const upcoming = openWork.mostUrgent
    .filter((task) => (dueTime(task) ?? -Infinity) >= now)
    .reduce<Task | undefined>((found, task) => (found === undefined || dueTime(task)! < dueTime(found)! ? task : found), undefined);
  if (upcoming) sentences.push(`Next due: ${quoted(upcoming)} on ${upcoming.dueOn!.slice(0, 10)}.`);
  const mostUrgent = openWork.mostUrgent.slice(0, 3);
  sentences.push(`Most urgent: ${joined(mostUrgent.map(quoted))}.`);

  return { summary: sentences.join(' '), highlights: highlightsOf(openWork.mostUrgent, now) };
}

/** Overdue first, then blocked, then due within two days, then high priority; at most SUMMARY_HIGHLIGHTS. */
function highlightsOf(tasks: Task[], now: number): ProjectSummaryResult['highlights'] {
  const ranked = tasks.map((task) => {
    const due = task.dueOn === null ? undefined : Date.parse(task.dueOn);
    const reasons: string[] = [];
    let rank = 4;
    if (due !== undefined && due < now) {
      reasons.push(`overdue since ${task.dueOn!.slice(0, 10)}`);
      rank = 0;
    }
    if (task.status === 'BLOCKED') {
      reasons.push('blocked');
      rank = Math.min(rank, 1);
    }
    if (due !== undefined && due >= now && due - now <= SOON_MS) {
      reasons.push(`due ${task.dueOn!.slice(0, 10)}`);
      rank = Math.min(rank, 2);
    }
    if (task.priority === 'HIGH') {
      reasons.push('high priority');
      rank = Math.min(rank, 3);
    }
    if (reasons.length === 0) reasons.push(`${task.priority.toLowerCase()} priority, the most urgent open task`);
    const reason = reasons.join(', ');
    return { rank, highlight: { taskId: task.id, reason: `${reason[0]!.toUpperCase()}${reason.slice(1)}.` } };
  });
  const flagged = ranked.filter((entry) => entry.rank < 4).sort((a, b) => a.rank - b.rank);
  return (flagged.length > 0 ? flagged : ranked.slice(0, 1)).slice(0, SUMMARY_HIGHLIGHTS).map((entry) => entry.highlight);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function listed(counts: [number, string][]): string {
  return joined(counts.filter(([count]) => count > 0).map(([count, label]) => `${count} ${label}`));
}

function joined(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function quoted(task: Task): string {
  const title = plainLine(task.title);
  const cut = cutToCharacters(title, QUOTED_TITLE_CHARACTERS);
  return `"${cut}${cut === title ? '' : '…'}"`;
}
