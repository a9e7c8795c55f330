import { announcingWrites, ANSWER_BEFORE_DEADLINE_MS } from './announcing-writes';
import type { ServiceBinding } from './service-binding';

interface Methods {
  save: unknown;
  load: unknown;
}

/** A service whose `save` writes (answers 'saved') and `load` reads, announced by `announce`. */
const service = (announce: () => Promise<void>) =>
  announcingWrites(
    { definition: {}, handlers: { save: async () => 'saved', load: async () => 'loaded' } } as unknown as ServiceBinding<Methods>,
    ['load'],
    announce,
  ).handlers as unknown as Record<keyof Methods, (request: unknown, ctx: unknown) => Promise<unknown>>;

describe('announcingWrites', () => {
  afterEach(() => jest.useRealTimers());

  it('answers a write once its announcement is made', async () => {
    const order: string[] = [];
    const handlers = service(async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('announced');
    });
    order.push(String(await handlers.save({}, { deadline: new Date(Date.now() + 10_000) })));
    expect(order).toEqual(['announced', 'saved']);
    // A read is not announced.
    expect(await handlers.load({}, {})).toBe('loaded');
    expect(order).toEqual(['announced', 'saved']);
  });

  it('answers what the write did before its caller’s deadline, however long its announcement takes', async () => {
    // On fake time: the call waits for its announcement until ANSWER_BEFORE_DEADLINE_MS before its deadline, then answers.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let announced = false;
    const handlers = service(() => new Promise<void>((r) => setTimeout(() => r(void (announced = true)), 3_000)));
    let answer: unknown;
    const saving = handlers.save({}, { deadline: new Date(Date.now() + ANSWER_BEFORE_DEADLINE_MS + 200) }).then((a) => (answer = a));
    await jest.advanceTimersByTimeAsync(199);
    expect(answer).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(answer).toBe('saved');
    expect(announced).toBe(false);
    await saving;
  });

  it('waits for the announcement of a call with no deadline', async () => {
    let announced = false;
    const handlers = service(() => new Promise<void>((r) => setTimeout(() => r(void (announced = true)), 400)));
    await expect(handlers.save({}, {})).resolves.toBe('saved');
    expect(announced).toBe(true);
  });
});
