import { randomUUID } from 'node:crypto';
import type { Database } from '@platform/db';
import { NotFoundError } from '@platform/errors';
import type { ObjectStorage } from '@platform/object-storage';
import type { contractsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import type { ContractListing } from './listing';

/** Where a stored document is and what it is called. */
export interface StoredDocument {
  path: string;
  name: string;
  type: string;
}

/**
 * A contract's document in the object storage: stored once under a fresh key before the rows that name it,
 * shared by the contracts created together, deleted once nothing names it.
 */
export class ContractDocuments {
  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly listing: ContractListing,
    private readonly log: Logger,
  ) {}

  /** Where the contract's document is; NotFound when it has none. */
  async of(id: number, ownerId: number): Promise<contractsV1.ContractDocument> {
    const c = await this.listing.contract(id, ownerId);
    if (!c.document_path) throw new NotFoundError(`contract ${id} has no document`);
    return { path: c.document_path, fileName: c.document_name, contentType: c.document_type };
  }

  /** Stores an uploaded document under a fresh key; undefined when none was given. */
  async store(doc: contractsV1.Document | undefined): Promise<StoredDocument | undefined> {
    if (!doc) return undefined;
    const name = safeFileName(doc.fileName);
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(doc.contentType) ? doc.contentType : 'application/octet-stream';
    const path = `contracts/documents/${randomUUID()}/${name}`;
    await this.storage.put(path, Buffer.from(doc.content), type);
    return { path, name: doc.fileName.slice(0, 255) || name, type };
  }

  /** Deletes a stored document nothing refers to any more; a failure leaves an unreferenced object, logged. */
  async discard(path: string): Promise<void> {
    await this.storage.delete(path).catch((err) => this.log.warn({ err, path }, 'could not delete a contract document'));
  }

  /** Deletes a deleted contract's document unless another contract (created with it) still names it. */
  async discardUnlessNamed(path: string): Promise<void> {
    if (path && (await this.db.table('contracts').where({ document_path: path }).first('id')) === undefined) await this.discard(path);
  }
}

/** An object-key-safe file name: letters, digits, '.', '_' and '-', starting with a letter or digit. */
function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 120);
  return clean || 'document';
}
