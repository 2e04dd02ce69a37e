// What a repeatable Postman run needs to know that the contract states only in prose: which state
// a lifecycle move needs (so the extra requests that put a record there), which example values
// must move with the calendar, and which example references stay as they are. Everything else
// (which create makes the id a request needs, the order of creates, reads, changes and deletes)
// is derived from the document in postmanRun.ts.

import type { JsonObject } from './document.js';
import { runDatesScript, runDateTemplates } from './runDates.js';

/** A request of a folder's lifecycle sequence: an operation, on the record of `stem` (default: its own). */
export interface PlannedStep {
  operationId: string;
  /**
   * Set only on a request beyond the operation's own: makes its id and marks it as a setup
   * request in its description.
   */
  key?: string;
  /** The record it acts on or creates, as the variable stem: `contractToSign` → `{{contractToSignId}}`. */
  stem?: string;
  /** The item's name, for an extra request. */
  name?: string;
  /** Why the extra request is there (its description). */
  why?: string;
  /** The whole JSON body instead of the example's; `<example of companyId>` is that path parameter's example. */
  body?: JsonObject;
}

export interface ApiRunPlan {
  /** A collection-level pre-request script: variables every request may use. */
  prerequest?: string[];
  /** Body members set on an operation's every request (values are Postman templates). */
  bodyOverrides?: Record<string, JsonObject>;
  /** Body members an operation keeps as the example has them instead of the run's own record, and why. */
  keepExample?: Record<string, { members: string[]; why: string }>;
  /** Per folder (tag), the order of its lifecycle moves and the extra requests they need. */
  lifecycles?: Record<string, PlannedStep[]>;
}

export const RUN_PLANS: Record<string, ApiRunPlan> = {
  'work-platform': {
    // Dates relative to the run, set before each request (see runDates.ts).
    prerequest: runDatesScript(),
    bodyOverrides: runDateTemplates(),
    keepExample: {
      importIssues: {
        members: ['projectId'],
        why: 'The issues become tasks of the example project: the run cannot delete tasks it did not create by id, and a project with tasks cannot be deleted. Importing again never duplicates an issue.',
      },
    },
    lifecycles: {
      // draft → sent → draft (withdraw) → sent → declined, then deleted; a second contract goes to
      // signed and stays (a signed contract is a record of an agreement and cannot be deleted, and
      // keeps its company): it names the company of the examples, not one the run deletes.
      Contracts: [
        { operationId: 'sendContract' },
        { operationId: 'withdrawContract' },
        {
          operationId: 'sendContract',
          key: 'again',
          name: 'Send the withdrawn contract again',
          why: 'Setup for the next request: only a `sent` contract can be declined.',
        },
        { operationId: 'declineContract' },
        {
          operationId: 'createContract',
          key: 'to-sign',
          stem: 'contractToSign',
          name: 'Create a contract to sign',
          why: "Setup for signing: a second draft, for the examples' company. Signed contracts are kept (with their company), so every run leaves this one behind.",
          body: { title: 'Postman run: a contract to sign', companyId: '<example of companyId>', amountMinor: 100000, currency: 'EUR', expiresOn: '{{in30Days}}' },
        },
        {
          operationId: 'sendContract',
          key: 'to-sign',
          stem: 'contractToSign',
          name: 'Send the contract to sign',
          why: 'Setup for the next request: only a `sent` contract can be signed.',
        },
        { operationId: 'signContract', stem: 'contractToSign' },
      ],
    },
  },
};
