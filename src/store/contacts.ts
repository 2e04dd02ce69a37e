// Contacts of the CRM. Every read and write is scoped by workspace (another workspace's contact
// or company is "not found"), every change bumps `version` by one and records its outbox event in
// the same transaction. A contact that a deal lists cannot be deleted.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, count, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, dealContacts, storageLimits } from '../../db/schema.js';
import { engineFilteredKeysetList, type FilteredListOptions } from './filteredLists.js';
import { placeholdersFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { InUseError, InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { changeWriter, checkText, formatTimestamp, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export type Contact = components['schemas']['Contact'];
export type CreateContactInput = components['schemas']['ContactCreate'];
export type UpdateContactInput = components['schemas']['ContactUpdate'];

/** The fields the list sorts by: the contract's `ContactSort` parameter. */
export const contactSorts = sortFields.ContactSort;
export type ContactSort = (typeof contactSorts)[number];
export type ContactListOptions = FilteredListOptions<ContactSort, 'companyId' | 'updatedSince'>;

export interface ContactStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface ContactStore {
  createContact(workspaceId: string, input: CreateContactInput, actor: EventActor): Promise<Contact>;
  /** Undefined when missing or in another workspace. */
  getContact(workspaceId: string, id: string): Promise<Contact | undefined>;
  /** Applies the given members when `expectedVersion` is current; a patch that changes nothing writes nothing. */
  updateContact(workspaceId: string, id: string, patch: UpdateContactInput, expectedVersion: number, actor: EventActor): Promise<Contact>;
  /** Deletes a contact that no deal lists (else InUseError `contact-has-deals`). Returns the contact as it was. */
  deleteContact(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Contact>;
  /** `updatedSince` in milliseconds since the epoch. */
  listContacts(workspaceId: string, options: ContactListOptions): Promise<KeysetPage<Contact>>;
}

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

type ListedContactRow = [
  id: string,
  sortKey: string | number,
  name: string,
  email: string | null,
  phone: string | null,
  companyId: string | null,
  version: number,
  createdAt: number,
  updatedAt: number,
];

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
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(contacts.workspaceId, sql.placeholder('workspaceId')), eq(contacts.id, sql.placeholder('id')));
  const selectOne = engine.statement<ContactRow>(orm.select().from(contacts).where(inWorkspace));
  const companyExists = workspaceRowStatement(engine, companies);
  const insert = engine.statement(orm.insert(contacts).values(placeholdersFor(contacts)));
  const update = engine.statement(
    orm
      .update(contacts)
      .set({
        name: sql`${sql.placeholder('name')}`,
        email: sql`${sql.placeholder('email')}`,
        phone: sql`${sql.placeholder('phone')}`,
        companyId: sql`${sql.placeholder('companyId')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(contacts).where(inWorkspace));
  const countDeals = engine.statement<{ count: number }>(
    orm
      .select({ count: count() })
      .from(dealContacts)
      .where(and(eq(dealContacts.workspaceId, sql.placeholder('workspaceId')), eq(dealContacts.contactId, sql.placeholder('id')))),
  );

  const list = engineFilteredKeysetList(engine, {
    table: contacts,
    idColumn: contacts.id,
    workspaceColumn: contacts.workspaceId,
    columns: {
      name: contacts.name,
      email: contacts.email,
      phone: contacts.phone,
      companyId: contacts.companyId,
      version: contacts.version,
      createdAt: contacts.createdAt,
      updatedAt: contacts.updatedAt,
    },
    sortKeys,
    filters: {
      companyId: eq(contacts.companyId, sql.placeholder('companyId')),
      updatedSince: gte(contacts.updatedAt, sql.placeholder('updatedSince')),
    },
    toItem: ([id, , name, email, phone, companyId, version, createdAt, updatedAt]: ListedContactRow) =>
      toContact({ id, name, email, phone, companyId, version, createdAt, updatedAt }),
  });

  const write = changeWriter(engine, contactConstraintFields);
  const currentRow = async (workspaceId: string, id: string, expectedVersion: number | null): Promise<ContactRow> =>
    versionedRow('contact', id, await selectOne.object({ workspaceId, id }), expectedVersion);

  async function checkCompany(workspaceId: string, companyId: string | null, previous?: string | null): Promise<void> {
    if (companyId !== null && companyId !== previous && !(await companyExists.row({ workspaceId, id: companyId }))) {
      throw new NotFoundError('company', companyId);
    }
  }

  return {
    async createContact(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkContactValues(input);
      const at = now();
      const row: ContactRow = {
        id: newId('ctc', randomBytes),
        workspaceId,
        name: input.name,
        email: input.email ?? null,
        phone: input.phone ?? null,
        companyId: input.companyId ?? null,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      return write(async () => {
        await checkCompany(workspaceId, row.companyId);
        await insert.run(row);
        const contact = toContact(row);
        await outbox.record(workspaceId, 'contact.created', actor, at, contact);
        return contact;
      });
    },

    async getContact(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toContact(row) : undefined;
    },

    async updateContact(workspaceId, id, patch, expectedVersion, actor) {
      checkContactValues(patch);
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const next: ContactRow = {
          ...current,
          name: patch.name ?? current.name,
          email: patch.email === undefined ? current.email : patch.email,
          phone: patch.phone === undefined ? current.phone : patch.phone,
          companyId: patch.companyId === undefined ? current.companyId : patch.companyId,
        };
        const changed = (['name', 'email', 'phone', 'companyId'] as const).some((name) => next[name] !== current[name]);
        if (!changed) return toContact(current);
        await checkCompany(workspaceId, next.companyId, current.companyId);
        next.version = current.version + 1;
        next.updatedAt = now();
        await update.run(next);
        const contact = toContact(next);
        await outbox.record(workspaceId, 'contact.updated', actor, next.updatedAt, contact);
        return contact;
      });
    },

    async deleteContact(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const dealCount = (await countDeals.object({ workspaceId, id }))?.count ?? 0;
        if (dealCount > 0) throw new InUseError('contact-has-deals', id, dealCount);
        await remove.run({ workspaceId, id });
        const contact = toContact(current);
        await outbox.record(workspaceId, 'contact.deleted', actor, now(), contact);
        return contact;
      });
    },

    listContacts: list,
  };
}
