import { describe, expect, it } from 'vitest';
import { projectStatuses, taskPriorities, taskStatuses, webhookDeliveryStatuses, webhookDisabledCodes, webhookSubscriptionStatuses } from '../../db/schema.js';
import { enumValuesOf } from '../../scripts/contract/contractRules.js';
import type { JsonObject } from '../../scripts/contract/document.js';
import { loadContractDocument } from '../support/contractClient.js';

const document = loadContractDocument('work-platform');

describe('enumValuesOf', () => {
  it('lists enum schemas by name and enum members by Schema.member, skipping members that refer to an enum schema', () => {
    const values = enumValuesOf({
      components: {
        schemas: {
          Colour: { type: 'string', enum: ['RED', 'BLUE'] },
          Paint: { type: 'object', properties: { colour: { $ref: '#/components/schemas/Colour' }, finish: { type: 'string', enum: ['MATT', 'GLOSS'] }, coats: { type: 'integer', enum: [1, 2] } } },
        },
      },
    });
    expect(values).toEqual({ Colour: ['RED', 'BLUE'], 'Paint.finish': ['MATT', 'GLOSS'] });
  });

  it("gives the database the contract's own value lists, so the CHECK constraints follow the spec", () => {
    const values = enumValuesOf(document as JsonObject);
    expect([...taskStatuses]).toEqual(values.TaskStatus);
    expect([...taskPriorities]).toEqual(values.TaskPriority);
    expect([...projectStatuses]).toEqual(values['Project.status']);
    expect([...webhookSubscriptionStatuses]).toEqual(values['WebhookFields.status']);
    expect([...webhookDisabledCodes]).toEqual(values['WebhookDisabledReason.code']);
    expect([...webhookDeliveryStatuses]).toEqual(values.WebhookDeliveryStatus);
  });
});
