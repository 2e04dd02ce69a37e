// The reference page's copy of the document (src/http/referenceNarrowing.ts): each event body stated as one schema.
import { describe, expect, it } from 'vitest';
import { narrowForReference } from '../../src/http/referenceNarrowing.js';
import { loadContractDocument } from '../support/contractClient.js';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema> };
type Document = { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: Schema } } } } }>; components: { schemas: Record<string, Schema> } };

const bodyOf = (document: Document, event: string) => document.webhooks[event]!.post.requestBody.content['application/json'].schema;

describe('narrowForReference', () => {
  const served = loadContractDocument('work-platform') as Document;
  const servedText = JSON.stringify(served);
  const narrowed = narrowForReference(served);

  it('states every event body as the envelope with the event\'s type and resource, with no allOf', () => {
    const events = Object.keys(served.webhooks);
    expect(events.length).toBeGreaterThan(20);
    for (const event of events) {
      const original = bodyOf(served, event);
      const resource = ((original.allOf as Schema[])[1]!.properties!.data!.properties!.object as { $ref: string }).$ref;
      const body = bodyOf(narrowed, event);
      expect(body.allOf, event).toBeUndefined();
      expect(body.additionalProperties, event).toBe(false);
      expect(body.required, event).toEqual(served.components.schemas.WebhookEnvelope!.required);
      expect(body.properties!.type, event).toMatchObject({ type: 'string', const: event });
      expect(body.properties!.type!.enum, event).toBeUndefined();
      expect(body.properties!.data!.properties!.object, event).toMatchObject({ $ref: resource });
      expect(body.properties!.data!.properties!.object!.oneOf, event).toBeUndefined();
      expect(Object.keys(body.properties!), event).toEqual(Object.keys(served.components.schemas.WebhookEnvelope!.properties!));
    }
  });

  it('leaves an allOf that adds members as it is, and the served document untouched', () => {
    expect(narrowed.components.schemas.WebhookCreated).toEqual(served.components.schemas.WebhookCreated);
    expect(narrowed.components.schemas.WebhookEnvelope).toEqual(served.components.schemas.WebhookEnvelope);
    expect(JSON.stringify(served)).toBe(servedText);
  });
});
