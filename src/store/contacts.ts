// Contacts of the CRM, a versioned resource (versionedResources.ts). A contact's company must be
// of its workspace; a contact that a deal lists cannot be deleted.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, dealContacts, storageLimits } from '../../db/schema.js';
import { workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import type { FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { SortKeyDefinition } from './keysetPages.js';
import { referenceCounter, versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { InUseError, InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, type ConstraintFields } from './workPlatformValues.js';

export type Contact = components['schemas']['Contact'];
export type CreateContactInput = components['schemas']['ContactCreate'];
export type UpdateContactInput = components['schemas']['ContactUpdate'];

/** The fields the list sorts by: the contract's `ContactSort` parameter. */
export const contactSorts = sortFields.ContactSort;
export type ContactSort = (typeof contactSorts)[number];
export type ContactListOptions = FilteredListOptions<ContactSort, 'companyId' | 'updatedSince'>;

export type ContactStoreOptions = VersionedResourceOptions;

/** Deleting a contact that a deal lists is an InUseError (`contact-has-deals`). */
export type ContactStore = VersionedStore<'Contact', 'Contacts', Contact, CreateContactInput, UpdateContactInput, ContactListOptions>;

type ContactRow = typeof contacts.$inferSelect;

export function toContact(row: Omit<ContactRow, 'workspaceId'>): Contact {
  const createdAt = formatTimestamp(row.createdAt);
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    companyId: row.companyId,
    version: row.version,
    createdAt,
    updatedAt: row.updatedAt === row.createdAt ? createdAt : formatTimestamp(row.updatedAt),
  };
}

const sortKeys: Record<ContactSort, SortKeyDefinition> = {
  createdAt: { expression: contacts.createdAt, keyType: 'number' },
  updatedAt: { expression: contacts.updatedAt, keyType: 'number' },
  name: { expression: contacts.name, keyType: 'string' },
};

/** The length CHECKs of the table, by constraint name (the same names on both engines). */
export const contactConstraintFields: ConstraintFields = {
  contacts_name_length: { field: 'name', limit: storageLimits.contactName },
  contacts_email_length: { field: 'email', limit: storageLimits.contactEmail },
  contacts_phone_length: { field: 'phone', limit: storageLimits.contactPhone },
};

function checkContactValues(input: UpdateContactInput): void {
  if (input.name !== undefined) checkText('name', input.name, storageLimits.contactName, { allowEmpty: false });
  if (input.email !== undefined && input.email !== null) checkText('email', input.email, storageLimits.contactEmail, { allowEmpty: false });
  if (input.phone !== undefined && input.phone !== null) checkText('phone', input.phone, storageLimits.contactPhone, { allowEmpty: false });
  if (input.companyId !== undefined && input.companyId !== null && typeof input.companyId !== 'string') {
    throw new InvalidValueError('companyId', 'must be a string or null.');
  }
}

export function createContactStore(source: StoreSource, options: ContactStoreOptions = {}): ContactStore {
  const engine = engineOf(source);
  const resource = versionedResource(
    engine,
    {
      table: contacts,
      entity: 'contact',
      constraintFields: contactConstraintFields,
      toItem: toContact,
      sortKeys,
      filters: {
        companyId: eq(contacts.companyId, sql.placeholder('companyId')),
        updatedSince: gte(contacts.updatedAt, sql.placeholder('updatedSince')),
      },
    },
    options,
  );
  const companyExists = workspaceRowStatement(engine, companies);
  const countDeals = referenceCounter(engine, dealContacts, dealContacts.contactId);

  async function checkCompany(workspaceId: string, companyId: string | null, previous?: string | null): Promise<void> {
    if (companyId !== null && companyId !== previous && !(await companyExists.row({ workspaceId, id: companyId }))) {
      throw new NotFoundError('company', companyId);
    }
  }

  return {
    async createContact(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkContactValues(input);
      const at = resource.now();
      const companyId = input.companyId ?? null;
      return resource.create(
        {
          id: newId('ctc', options.randomBytes ?? defaultRandomBytes),
          workspaceId,
          name: input.name,
          email: input.email ?? null,
          phone: input.phone ?? null,
          companyId,
          version: 1,
          createdAt: at,
          updatedAt: at,
        },
        actor,
        { check: () => checkCompany(workspaceId, companyId) },
      );
    },

    getContact: resource.get,

    async updateContact(workspaceId, id, patch, expectedVersion, actor) {
      checkContactValues(patch);
      return resource.update(workspaceId, id, expectedVersion, actor, {
        apply: (current) => ({
          ...current,
          name: patch.name ?? current.name,
          email: patch.email === undefined ? current.email : patch.email,
          phone: patch.phone === undefined ? current.phone : patch.phone,
          companyId: patch.companyId === undefined ? current.companyId : patch.companyId,
        }),
        fields: ['name', 'email', 'phone', 'companyId'],
        check: (next, current) => checkCompany(workspaceId, next.companyId, current.companyId),
      });
    },

    async deleteContact(workspaceId, id, expectedVersion, actor) {
      return resource.delete(workspaceId, id, expectedVersion, actor, {
        async check() {
          const dealCount = await countDeals(workspaceId, id);
          if (dealCount > 0) throw new InUseError('contact-has-deals', id, dealCount);
        },
      });
    },

    listContacts: resource.list,
  };
}
