import { AsyncLocalStorage } from 'node:async_hooks';
import { ANY_TUPLE, relationTags } from '@platform/bus';
import type { CallContext } from '@platform/service-kit';
import type { TupleSource } from './source';
import type { Tuple } from './types';

/**
 * What one call read and wrote, recorded as the engine reads and writes, so that authz's answers can say what they were
 * read from (`dependsOn`) and its tuple notices what they touched (tuples-changed.ts). Both speak in the tags of
 * `tupleTags` (@platform/bus): an object (`team:12`, for reads of all its tuples), an object's relation
 * (`team:12#member`, with `team:12#*` beside it for notices that name objects alone), a type (`team:*`, for reads that
 * look for objects of a type) and a user's tuples (`@team:12`). A reader keeps an answer under what it read and drops
 * it when a notice names any of it, which is exact: an answer changes only if a tuple it read (or looked for and did
 * not find) changes.
 *
 * Recording is asked per call (`recordingReads`, `recordingWrites`); outside one, the engine records nothing.
 */
const reads = new AsyncLocalStorage<Set<string>>();
const writes = new AsyncLocalStorage<Tuple[]>();

/** Runs `read` recording what it reads; answers its value and the tags read (empty when the engine records none). */
export async function recordingReads<T>(read: () => Promise<T>): Promise<{ value: T; dependsOn: string[] }> {
  const tags = new Set<string>();
  const value = await reads.run(tags, read);
  return { value, dependsOn: [...tags] };
}

/**
 * The answer of `read` with what it was read from (`dependsOn`), for the platform's own apps, which keep answers under
 * it (@platform/authz-client); another caller (a service account) is not shown which objects an answer reached.
 */
export async function withDependsOn<T>(ctx: CallContext, read: () => Promise<T>): Promise<{ value: T; dependsOn: string[] }> {
  if (ctx.caller?.kind !== 'app') return { value: await read(), dependsOn: [] };
  return recordingReads(read);
}

/** Whether the current call records its reads. */
export const recordsReads = (): boolean => reads.getStore() !== undefined;

/** Records that objects were read (the tuples on them, found or not). */
export function readObjects(type: string, ids: readonly string[]): void {
  const tags = reads.getStore();
  if (tags) for (const id of ids) tags.add(`${type}:${id}`);
}

/** Records that one relation of objects was read (the tuples on `type:id#relation`, found or not). */
export function readRelation(type: string, ids: readonly string[], relation: string): void {
  const tags = reads.getStore();
  if (tags) for (const id of ids) for (const tag of relationTags(`${type}:${id}`, relation)) tags.add(tag);
}

/** Records a read of a type's objects (which objects hold a relation) or of a user's tuples (`@type:id`). */
export function readTag(tag: string): void {
  reads.getStore()?.add(tag);
}

/** Records a read that any tuple may change (every tuple, or a whole relation of every type). */
export function readAnything(): void {
  reads.getStore()?.add(ANY_TUPLE);
}

/** The source with its reads recorded, while the current call records them; else the source itself. */
export function recordedSource(source: TupleSource): TupleSource {
  if (!recordsReads()) return source;
  return {
    readUsers(asked) {
      for (const read of asked) readRelation(read.objectType, read.objectIds, read.relation);
      return source.readUsers(asked);
    },
    readObjectIds(objectType, relation, users) {
      readTag(`${objectType}:*`);
      return source.readObjectIds(objectType, relation, users);
    },
  };
}

/** Runs `write` recording the tuples it writes and deletes (read back with `tuplesWritten` before it ends). */
export async function recordingWrites<T>(write: () => Promise<T>): Promise<T> {
  return writes.run([], write);
}

/** The tuples written and deleted so far in the current call (empty outside `recordingWrites`). */
export const tuplesWritten = (): readonly Tuple[] => writes.getStore() ?? [];

/** Records tuples written or deleted (called once the store has them, committed or about to be). */
export function wrote(tuples: readonly Pick<Tuple, 'user' | 'relation' | 'object'>[]): void {
  const written = writes.getStore();
  if (written) for (const t of tuples) written.push({ user: t.user, relation: t.relation, object: t.object });
}

/**
 * Records a change of an object's own row that no tuple shows (a custom role's name or description): named in the notice
 * as its parent tuple would be (the object, its type and its organization).
 */
export function wroteRow(object: string, organization: string): void {
  writes.getStore()?.push({ user: organization, relation: 'organization', object });
}
