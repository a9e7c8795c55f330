/** An object as stored: its bytes and the content type it was stored with. */
export interface StoredObject {
  body: Buffer;
  contentType: string;
}

/**
 * Where services keep binary objects (avatars, documents): put, get and delete by key. Two implementations:
 * files under DATA_DIR/objects (embedded, the default) and an S3-compatible bucket (OBJECT_STORAGE_URL).
 */
export interface ObjectStorage {
  /** Where objects go, for logs: a directory or `s3://bucket` at an endpoint. */
  readonly description: string;
  /** Stores (or replaces) an object; once this resolves, get() answers the new bytes. */
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** The object, or undefined when there is none under the key. */
  get(key: string): Promise<StoredObject | undefined>;
  /** Deletes an object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  close(): void;
}

// Keys are path-like: segments of letters, digits, '.', '_' and '-', each starting with a letter or a
// digit (so no '..', no hidden files, no absolute paths), joined by single slashes.
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;
export const MAX_KEY_LENGTH = 512;

/** Whether a string is a valid object key. */
export function isValidKey(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && KEY.test(key);
}

/** Throws on an invalid key: keys come from code, never from clients unchecked, so this is a programming error. */
export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new Error(`invalid object key ${JSON.stringify(key.slice(0, 80))}`);
}

const CONTENT_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(?:\s*;[^\r\n]*)?$/;

/** Throws on a content type that is not `type/subtype[; params]` on one line. */
export function assertValidContentType(contentType: string): void {
  if (contentType.length > 255 || !CONTENT_TYPE.test(contentType)) {
    throw new Error(`invalid content type ${JSON.stringify(contentType.slice(0, 80))}`);
  }
}
