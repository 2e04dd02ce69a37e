// The offline provider's rules, called as the routes call it (prepare, then run), on an injected day.
import { describe, expect, it } from 'vitest';
import { createOfflineProvider } from '../../src/ai/offlineProvider.js';
import type { ProjectOpenWork } from '../../src/store/projectOpenWork.js';
import type { Task } from '../../src/store/tasks.js';

const provider = createOfflineProvider();
// Wednesday 2026-11-25, late in the day: relative dates count from the UTC day, not from the hour.
const now = Date.UTC(2026, 10, 25, 23, 30, 0);

async function drafts(text: string, maxDrafts = 20) {
  return (await provider.draftTasks({ projectName: 'P', text, maxDrafts, now }).run()).result;
}

describe('offline drafts', () => {
  it('strips bullets, checkboxes and numbering, splits sentences, and skips headings and lines without words', async () => {
    const result = await drafts(['Sprint goals:', '1) First thing.', 'a) Second thing', '- [x] Third thing. Fourth thing? Fifth', '   ', '...', '• Sixth'].join('\r\n'));
    expect(result.map((draft) => draft.title)).toEqual(['First thing', 'Second thing', 'Third thing', 'Fourth thing?', 'Fifth', 'Sixth']);
  });

  it('reads due dates relative to the UTC day, the first one named winning; an impossible date names nothing', async () => {
    const result = await drafts(['Ship on Wednesday', 'Ship on saturday', 'Ship today, not tomorrow', 'Ship by 2026-02-30', 'Ship by 2027-01-04 or friday', 'Ship next week'].join('\n'));
    expect(result.map((draft) => draft.dueOn)).toEqual([
      // Today is a Wednesday: "Wednesday" is the next one.
      '2026-12-02T23:59:59.999Z',
      '2026-11-28T23:59:59.999Z',
      '2026-11-25T23:59:59.999Z',
      null,
      '2027-01-04T23:59:59.999Z',
      '2026-12-02T23:59:59.999Z',
    ]);
  });

  it('gives HIGH to urgent words and "!", LOW to someday words, MEDIUM otherwise', async () => {
    const result = await drafts(['Critical: restore backups', 'Blocker for release', 'Call back!', 'Nice to have: dark mode', 'Eventually rename the repo', 'Write tests'].join('\n'));
    expect(result.map((draft) => draft.priority)).toEqual(['HIGH', 'HIGH', 'HIGH', 'LOW', 'LOW', 'MEDIUM']);
  });

  it('cuts titles to 200 characters and keeps its usage within the bound it reserves, even for the widest characters', async () => {
    // A letter of 4 bytes in UTF-8, a quote (escaped in JSON), a control character and a lone surrogate.
    const widest = '𝒜'.repeat(300);
    const call = provider.draftTasks({ projectName: 'P', text: Array(20).fill(`"${widest}\u0007\ud800`).join('\n'), maxDrafts: 20, now });
    const answer = await call.run();
    expect(answer.result).toHaveLength(20);
    for (const draft of answer.result) expect([...draft.title]).toHaveLength(200);
    expect(answer.usage.completionTokens).toBeLessThanOrEqual(call.bound.completionTokens);
    expect(answer.usage.promptTokens).toBeLessThanOrEqual(call.bound.promptTokens);
    expect(answer.usage.promptTokens).toBe(Math.ceil(call.bound.promptTokens / 4));
  });
});

function task(overrides: Partial<Task>): Task {
  return {
    id: 'tsk_1',
    projectId: 'prj_1',
    title: 'A task',
    status: 'TODO',
    priority: 'MEDIUM',
    dueOn: null,
    assigneeId: null,
    version: 1,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
    completedAt: null,
    ...overrides,
  };
}

function openWork(tasks: Task[], overdueTaskCount: number): ProjectOpenWork {
  const count = <K extends 'status' | 'priority'>(field: K, value: Task[K]) => tasks.filter((entry) => entry[field] === value).length;
  return {
    openTaskCount: tasks.length,
    overdueTaskCount,
    countsByStatus: { TODO: count('status', 'TODO'), IN_PROGRESS: count('status', 'IN_PROGRESS'), BLOCKED: count('status', 'BLOCKED') },
    countsByPriority: { LOW: count('priority', 'LOW'), MEDIUM: count('priority', 'MEDIUM'), HIGH: count('priority', 'HIGH') },
    mostUrgent: tasks,
  };
}

describe('offline summary', () => {
  it('ranks highlights overdue, blocked, due within two days, then high priority, at most five', async () => {
    const tasks = [
      task({ id: 'tsk_high', priority: 'HIGH', title: 'High only' }),
      task({ id: 'tsk_soon', dueOn: '2026-11-26T12:00:00.000Z', title: 'Due soon' }),
      task({ id: 'tsk_blocked', status: 'BLOCKED', title: 'Blocked' }),
      task({ id: 'tsk_late', dueOn: '2026-11-20T12:00:00.000Z', title: 'Late' }),
      task({ id: 'tsk_plain', title: 'Plain' }),
    ];
    const { result } = await provider.summarizeProject({ project: { id: 'prj_1', name: 'Launch' }, openWork: openWork(tasks, 1), now }).run();
    expect(result.highlights).toEqual([
      { taskId: 'tsk_late', reason: 'Overdue since 2026-11-20.' },
      { taskId: 'tsk_blocked', reason: 'Blocked.' },
      { taskId: 'tsk_soon', reason: 'Due 2026-11-26.' },
      { taskId: 'tsk_high', reason: 'High priority.' },
    ]);
    expect(result.summary).toBe(
      'Launch has 5 open tasks: 4 to do and 1 blocked; by priority 1 high and 4 medium. 1 task is overdue, the longest "Late" (due 2026-11-20). Next due: "Due soon" on 2026-11-26. Most urgent: "High only", "Due soon" and "Blocked".',
    );
  });

  it('names the most urgent task when nothing stands out, and quotes long titles cut short', async () => {
    const long = 'L'.repeat(120);
    const { result } = await provider.summarizeProject({ project: { id: 'prj_1', name: 'Quiet' }, openWork: openWork([task({ title: long, priority: 'LOW' })], 0), now }).run();
    expect(result.highlights).toEqual([{ taskId: 'tsk_1', reason: 'Low priority, the most urgent open task.' }]);
    expect(result.summary).toBe(`Quiet has 1 open task: 1 to do; by priority 1 low. None is overdue. Most urgent: "${'L'.repeat(80)}…".`);
  });
});
